import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { formatViolations, violationsOf } from '../../src/domain/violations.ts'

/**
 * The signing vectors of satang-canonical-v1: a byte-identical copy, kept in the repository, of the
 * vectors the design team published with the gateway spec (see `test/fixtures/README.md`).
 */
export const VECTORS_PATH = fileURLToPath(new URL('../fixtures/signing.json', import.meta.url))

const KeyPair = t.type({ private_key_pem: t.string, public_key_pem: t.string })
const Signer = t.keyof({ merchant: null, gateway: null })
const Fields = t.record(t.string, t.unknown)
const SigningVectors = t.type({
  convention: t.string,
  keys: t.type({ merchant: KeyPair, gateway: KeyPair }),
  cases: t.array(t.type({ name: t.string, signer: Signer, fields: Fields, canonical: t.string, signature: t.string })),
  tampered: t.array(t.type({ name: t.string, signer: Signer, fields: Fields })),
})
export type SigningVectors = t.TypeOf<typeof SigningVectors>

export const loadSigningVectors = (): SigningVectors => {
  const decoded = SigningVectors.decode(JSON.parse(readFileSync(VECTORS_PATH, 'utf8')))
  if (E.isLeft(decoded)) throw new Error(`signing vectors do not have the expected shape:\n${formatViolations(violationsOf(decoded.left))}`)
  return decoded.right
}
