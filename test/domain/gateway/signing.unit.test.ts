import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { satangCanonicalV1 } from '../../../src/domain/gateway/canonical.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier, SIGN_TYPE, signCanonical, signedForm, signedRequestHeaders, verifyCanonical } from '../../../src/domain/gateway/signing.ts'

/** Keys refused with a reason that never shows the key; signatures refused with the rule they break. */

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const pem = (k: KeyObject, type: 'pkcs8' | 'spki'): string => k.export({ type, format: 'pem' }).toString()
const PRIVATE = pem(rsa.privateKey, 'pkcs8')
const PUBLIC = pem(rsa.publicKey, 'spki')

const right = <A>(r: E.Either<unknown, A>): A => {
  if (E.isLeft(r)) throw new Error(JSON.stringify(r.left))
  return r.right
}

describe('loading keys', () => {
  it('RSA keys load', () => {
    expect(right(loadPrivateKey(PRIVATE)).asymmetricKeyType).toBe('rsa')
    expect(right(loadPublicKey(PUBLIC)).asymmetricKeyType).toBe('rsa')
    expect(right(loadPublicKey(PRIVATE)).type).toBe('public')
  })
  it('a key of another kind is refused, naming the kind', () => {
    expect(loadPrivateKey(pem(ec.privateKey, 'pkcs8'))).toEqual(E.left({ _tag: 'KeyError', message: 'not a usable RSA private key (PEM): expected an RSA key, got ec' }))
    expect(loadPublicKey(pem(ec.publicKey, 'spki'))).toEqual(E.left({ _tag: 'KeyError', message: 'not a usable RSA public key (PEM): expected an RSA key, got ec' }))
  })
  it('text that is not a key is refused without quoting it', () => {
    const broken = `-----BEGIN PRIVATE KEY-----\nc2VjcmV0IGtleSBtYXRlcmlhbA==\n-----END PRIVATE KEY-----\n`
    for (const r of [loadPrivateKey(broken), loadPublicKey(broken), loadPrivateKey('nonsense')]) {
      expect(E.isLeft(r)).toBe(true)
      const message = E.isLeft(r) ? r.left.message : ''
      expect(message).toMatch(/^not a usable RSA (private|public) key \(PEM\): /)
      expect(message).not.toContain('c2VjcmV0')
      expect(message).not.toContain('-----BEGIN')
    }
  })
})

describe('signatures', () => {
  const key = right(loadPrivateKey(PRIVATE))
  const pub = right(loadPublicKey(PUBLIC))
  const signer = makeSigner(satangCanonicalV1, key)
  const verifier = makeVerifier(satangCanonicalV1, pub)

  it('sign then verify; another text or another key does not verify', () => {
    const sig = signCanonical('a=1&b=2', key)
    expect(verifyCanonical('a=1&b=2', sig, pub)).toEqual({ valid: true })
    expect(verifyCanonical('a=1&b=3', sig, pub)).toEqual({ valid: false, reason: 'signature does not match the canonical string for this public key' })
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey
    expect(verifyCanonical('a=1&b=2', sig, other)).toMatchObject({ valid: false })
  })
  it('a signature that is missing, or not standard padded base64, is refused before any verification', () => {
    const sig = signCanonical('x', key)
    expect(verifyCanonical('x', '', pub)).toEqual({ valid: false, reason: 'signature is missing' })
    for (const bad of [sig.slice(1), `${sig}=`, sig.replace(/\+/g, '-').replace(/\//g, '_') + (sig.includes('+') || sig.includes('/') ? '' : '-'), ` ${sig}`, `${sig}\n`, 'abc']) {
      expect(verifyCanonical('x', bad, pub)).toEqual({ valid: false, reason: 'signature is not standard base64' })
    }
  })
  it('fields: signed over their canonical form; the sign field, its type and its absence are checked', () => {
    const fields = { merchant_id: 'M', order_amount: '100.00' }
    const sign = signer.sign(fields)
    expect(verifier.verify({ ...fields, sign })).toEqual({ valid: true })
    expect(verifier.verify({ ...fields, sign_type: SIGN_TYPE, sign })).toEqual({ valid: true })
    expect(verifier.verify(fields, sign)).toEqual({ valid: true })
    expect(verifier.verify(fields)).toEqual({ valid: false, reason: 'the sign field is missing' })
    expect(verifier.verify({ ...fields, sign: null })).toEqual({ valid: false, reason: 'the sign field is missing' })
    expect(verifier.verify({ ...fields, sign: 12 })).toEqual({ valid: false, reason: 'sign field must be a string' })
    expect(verifier.verify({ ...fields, sign_type: 'MD5', sign })).toEqual({ valid: false, reason: 'sign_type must be RSA, got "MD5"' })
    // A signature given apart from the fields (a request header) is not judged by a sign_type field.
    expect(verifier.verify({ ...fields, sign_type: 'MD5' }, sign)).toEqual({ valid: true })
  })
  it('request headers and signed forms carry RSA and a signature that verifies', () => {
    const fields = { merchant_id: 'M' }
    const headers = signedRequestHeaders(signer, fields)
    expect(Object.keys(headers)).toEqual(['content-type', 'sign-type', 'sign'])
    expect([headers['content-type'], headers['sign-type']]).toEqual(['application/json', 'RSA'])
    expect(verifier.verify(fields, headers['sign'])).toEqual({ valid: true })
    const form = signedForm(signer, { merchant_id: 'M', sign: 'old', sign_type: 'old' })
    expect(form.sign_type).toBe('RSA')
    expect(verifier.verify(form)).toEqual({ valid: true })
  })
})
