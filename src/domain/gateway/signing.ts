import { createPrivateKey, createPublicKey, createSign, createVerify, type KeyObject } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Canonicalizer } from './canonical.ts'

export const SIGN_TYPE = 'RSA'

/** Why a key could not be loaded. The key text itself never appears in the message. */
export type KeyError = { readonly _tag: 'KeyError'; readonly message: string }

const keyError = (what: string, cause: unknown): KeyError => ({
  _tag: 'KeyError',
  // Stryker disable next-line Regex: Node's key parsing errors never quote the key text, so the pattern finds nothing to cut, whichever way it is changed (a guard should a later Node quote it)
  message: `${what}: ${cause instanceof Error ? cause.message.replace(/-----BEGIN[\s\S]*$/, '') : 'unreadable'}`,
})

export const loadPrivateKey = (pem: string | Buffer): E.Either<KeyError, KeyObject> =>
  E.tryCatch(
    () => {
      const key = createPrivateKey(pem)
      if (key.asymmetricKeyType !== 'rsa') throw new Error(`expected an RSA key, got ${String(key.asymmetricKeyType)}`)
      return key
    },
    (e) => keyError('not a usable RSA private key (PEM)', e),
  )

export const loadPublicKey = (pem: string | Buffer): E.Either<KeyError, KeyObject> =>
  E.tryCatch(
    () => {
      const key = createPublicKey(pem)
      if (key.asymmetricKeyType !== 'rsa') throw new Error(`expected an RSA key, got ${String(key.asymmetricKeyType)}`)
      return key
    },
    (e) => keyError('not a usable RSA public key (PEM)', e),
  )

/** RSASSA-PKCS1-v1_5 over SHA-256 of the UTF-8 bytes of `canonical`, as standard base64 with padding. */
export const signCanonical = (canonical: string, key: KeyObject): string =>
  createSign('sha256').update(canonical, 'utf8').sign(key, 'base64')

export type VerifyResult =
  | { readonly valid: true }
  | { readonly valid: false; readonly reason: string }

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

export const verifyCanonical = (canonical: string, signature: string, key: KeyObject): VerifyResult => {
  if (signature === '') return { valid: false, reason: 'signature is missing' }
  if (!BASE64.test(signature) || signature.length % 4 !== 0) return { valid: false, reason: 'signature is not standard base64' }
  const ok = createVerify('sha256').update(canonical, 'utf8').verify(key, signature, 'base64')
  return ok ? { valid: true } : { valid: false, reason: 'signature does not match the canonical string for this public key' }
}

/** Signs and verifies field sets with one canonicalizer. */
export type Signer = {
  readonly canonicalizer: Canonicalizer
  readonly sign: (fields: Readonly<Record<string, unknown>>) => string
}
export type Verifier = {
  readonly canonicalizer: Canonicalizer
  /** Verifies `signature`, or the `sign` field of `fields` when no signature is given. */
  readonly verify: (fields: Readonly<Record<string, unknown>>, signature?: string) => VerifyResult
}

export const makeSigner = (canonicalizer: Canonicalizer, privateKey: KeyObject): Signer => ({
  canonicalizer,
  sign: (fields) => signCanonical(canonicalizer.canonicalize(fields), privateKey),
})

export const makeVerifier = (canonicalizer: Canonicalizer, publicKey: KeyObject): Verifier => ({
  canonicalizer,
  verify: (fields, signature) => {
    const sig = signature ?? fields['sign']
    if (sig === undefined || sig === null) return { valid: false, reason: 'the sign field is missing' }
    if (typeof sig !== 'string') return { valid: false, reason: 'sign field must be a string' }
    const signType = fields['sign_type']
    if (signature === undefined && signType !== undefined && signType !== SIGN_TYPE) {
      return { valid: false, reason: `sign_type must be ${SIGN_TYPE}, got ${JSON.stringify(signType)}` }
    }
    return verifyCanonical(canonicalizer.canonicalize(fields), sig, publicKey)
  },
})

/** The headers of a signed request: `sign` over the JSON body (POST) or the query parameters (GET). */
export const signedRequestHeaders = (signer: Signer, fields: Readonly<Record<string, unknown>>): Record<string, string> => ({
  'content-type': 'application/json',
  'sign-type': SIGN_TYPE,
  sign: signer.sign(fields),
})

/** A redirect form or notification as the gateway sends it: the fields plus `sign_type` and `sign`. */
export const signedForm = <F extends Readonly<Record<string, unknown>>>(signer: Signer, fields: F): F & { sign_type: string; sign: string } => {
  const { sign: _s, sign_type: _t, ...rest } = fields as Record<string, unknown>
  return { ...(rest as F), sign_type: SIGN_TYPE, sign: signer.sign(rest) }
}
