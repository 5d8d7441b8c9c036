import { constants, sign, type KeyObject } from 'node:crypto'
import type { Canonicalizer } from '../../domain/gateway/canonical.ts'

/**
 * Signs off the event loop: `crypto.sign` with a callback runs RSASSA-PKCS1-v1_5 / SHA-256 on libuv's
 * thread pool, so a process sending many requests (a reconciliation run) signs on every core while its
 * main thread reads answers and writes the log. The signature is the one `signCanonical` computes
 * (the same key, canonical string and padding), as standard base64.
 */
export type BackgroundSigner = { readonly sign: (fields: Readonly<Record<string, unknown>>) => Promise<string> }

export const makeBackgroundSigner = (canonicalizer: Canonicalizer, privateKey: KeyObject): BackgroundSigner => ({
  sign: (fields) =>
    new Promise((resolve, reject) => {
      sign('sha256', Buffer.from(canonicalizer.canonicalize(fields), 'utf8'), { key: privateKey, padding: constants.RSA_PKCS1_PADDING }, (err, signature) => {
        if (err !== null) reject(err)
        else resolve(signature.toString('base64'))
      })
    }),
})
