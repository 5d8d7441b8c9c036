import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as E from 'fp-ts/lib/Either.js'
import type { KeyObject } from 'node:crypto'
import { compareUtf8, satangCanonicalV1, sortedJson } from '../../../src/domain/gateway/canonical.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier, signedForm, signedRequestHeaders } from '../../../src/domain/gateway/signing.ts'
import { makeBackgroundSigner, makeWorkerSigner } from '../../../src/adapters/gateway/background-signer.ts'
import { loadSigningVectors } from '../../support/vectors.ts'

const vectors = loadSigningVectors()
const key = <A>(e: E.Either<{ message: string }, A>): A => {
  if (E.isLeft(e)) throw new Error(e.left.message)
  return e.right
}
const privateKey = (who: 'merchant' | 'gateway'): KeyObject => key(loadPrivateKey(vectors.keys[who].private_key_pem))
const publicKey = (who: 'merchant' | 'gateway'): KeyObject => key(loadPublicKey(vectors.keys[who].public_key_pem))

describe('satang-canonical-v1 against test/fixtures/signing.json', () => {
  it.each(vectors.cases.map((c) => [c.name, c] as const))('%s: canonical string, signature and verification', (_name, c) => {
    expect(satangCanonicalV1.canonicalize(c.fields)).toBe(c.canonical)
    expect(makeSigner(satangCanonicalV1, privateKey(c.signer)).sign(c.fields)).toBe(c.signature)
    expect(makeVerifier(satangCanonicalV1, publicKey(c.signer)).verify(c.fields, c.signature)).toEqual({ valid: true })
  })

  it.each(vectors.tampered.map((c) => [c.name, c] as const))('tampered: %s is rejected', (_name, c) => {
    const result = makeVerifier(satangCanonicalV1, publicKey(c.signer)).verify(c.fields)
    expect(result.valid).toBe(false)
  })

  it('a signature made with the merchant key does not verify with the gateway key', () => {
    const c = vectors.cases[0]
    if (c === undefined) throw new Error('no vector cases')
    const result = makeVerifier(satangCanonicalV1, publicKey('gateway')).verify(c.fields, c.signature)
    expect(result).toEqual({ valid: false, reason: 'signature does not match the canonical string for this public key' })
  })
})

describe('canonical string rules', () => {
  it('drops sign, sign_type, null, undefined and empty strings but keeps "0" and false', () => {
    expect(satangCanonicalV1.canonicalize({ sign: 'x', sign_type: 'RSA', a: null, b: undefined, c: '', d: '0', e: false })).toBe('d=0&e=false')
  })
  it('sorts keys by UTF-8 bytes, also inside nested objects and arrays', () => {
    expect(sortedJson({ b: [{ z: 1, a: 2 }], a: { y: '1', B: '2' } })).toBe('{"a":{"B":"2","y":"1"},"b":[{"a":2,"z":1}]}')
    // U+FF21 (3 UTF-8 bytes, one UTF-16 unit) sorts before U+1F600 (4 bytes, a surrogate pair) in both,
    // but U+E000 vs U+1F600 differ: UTF-16 puts the surrogate pair first, UTF-8 does not.
    expect(compareUtf8('\uE000', '\u{1F600}')).toBeLessThan(0)
    expect('\uE000' < '\u{1F600}').toBe(false)
  })
  it('property: the canonical string does not depend on key insertion order', () => {
    const value = fc.oneof(fc.string(), fc.constant(null), fc.constant(''), fc.dictionary(fc.string(), fc.string()), fc.array(fc.string()))
    const fieldsAndOrder = fc
      .dictionary(fc.string({ minLength: 1 }), value)
      .chain((fields) => {
        const keys = Object.keys(fields)
        return fc.tuple(fc.constant(fields), fc.shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length }))
      })
    fc.assert(
      fc.property(fieldsAndOrder, ([fields, order]) => {
        const reordered = Object.fromEntries(order.map((k) => [k, fields[k]]))
        expect(satangCanonicalV1.canonicalize(reordered)).toBe(satangCanonicalV1.canonicalize(fields))
      }),
    )
  })
})

describe('signed requests and forms', () => {
  const signer = makeSigner(satangCanonicalV1, privateKey('gateway'))
  const verifier = makeVerifier(satangCanonicalV1, publicKey('gateway'))
  it('request headers carry sign-type RSA and a sign that verifies', () => {
    const fields = { version: 'v1', service: 'svc.payment.query', merchant_id: '140000000000000001', merchant_order_id: 'X1' }
    const headers = signedRequestHeaders(signer, fields)
    expect(headers['sign-type']).toBe('RSA')
    expect(headers['content-type']).toBe('application/json')
    expect(verifier.verify(fields, headers['sign'])).toEqual({ valid: true })
  })
  it('a form gets sign_type and sign and verifies from its own sign field; changing a field breaks it', () => {
    const form = signedForm(signer, { merchant_id: '140000000000000001', order_status: 'PS', order_amount: '1.00' })
    expect(form.sign_type).toBe('RSA')
    expect(verifier.verify(form)).toEqual({ valid: true })
    expect(verifier.verify({ ...form, order_amount: '1.01' }).valid).toBe(false)
    expect(verifier.verify({ ...form, sign_type: 'MD5' })).toEqual({ valid: false, reason: 'sign_type must be RSA, got "MD5"' })
  })
  it('reports a missing or malformed signature with a reason', () => {
    // The verifier also checks callbacks over HTTP: its reasons speak of the fields, never of a CLI flag.
    expect(verifier.verify({ a: '1' })).toEqual({ valid: false, reason: 'the sign field is missing' })
    expect(verifier.verify({ a: '1', sign: '' })).toEqual({ valid: false, reason: 'signature is missing' })
    expect(verifier.verify({ a: '1' }, 'not base64!')).toEqual({ valid: false, reason: 'signature is not standard base64' })
  })
  it('refuses a key that is not an RSA PEM, without echoing the key text', () => {
    const bad = loadPrivateKey('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n')
    expect(E.isLeft(bad)).toBe(true)
    if (E.isLeft(bad)) expect(bad.left.message).not.toContain('AAAA')
  })
})

describe('compareUtf8', () => {
  it('property: agrees with comparing the UTF-8 bytes', () => {
    const enc = new TextEncoder()
    const byBytes = (a: string, b: string): number => Math.sign(Buffer.compare(Buffer.from(enc.encode(a)), Buffer.from(enc.encode(b))))
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
      expect(Math.sign(compareUtf8(a, b))).toBe(byBytes(a, b))
    }), { numRuns: 2000 })
    // 2,000 runs take well under a second on an idle core; the limit allows for a loaded CI machine.
  }, 30_000)
})

describe('signing on the thread pool', () => {
  it('gives the vector signatures, the same as signing on the event loop', async () => {
    for (const c of vectors.cases) expect(await makeBackgroundSigner(satangCanonicalV1, privateKey(c.signer)).sign(c.fields)).toBe(c.signature)
  })
})

describe('signing on worker threads (issue 28)', () => {
  it('gives the vector signatures, each answer to its own request when many are in flight on two workers', async () => {
    const signers = new Map<string, ReturnType<typeof makeWorkerSigner>>()
    const signerOf = (name: Parameters<typeof privateKey>[0]): ReturnType<typeof makeWorkerSigner> => {
      const known = signers.get(String(name))
      if (known !== undefined) return known
      const made = makeWorkerSigner(satangCanonicalV1, privateKey(name), 2)
      signers.set(String(name), made)
      return made
    }
    // Every vector three times over, all at once: answers must not cross.
    const cases = [...vectors.cases, ...vectors.cases, ...vectors.cases]
    const signatures = await Promise.all(cases.map((c) => signerOf(c.signer).sign(c.fields)))
    expect(signatures).toEqual(cases.map((c) => c.signature))
  })
})
