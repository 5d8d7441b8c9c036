import type { KeyObject } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Canonicalizer } from '../domain/gateway/canonical.ts'
import { MerchantId } from '../domain/gateway/fields.ts'
import { decodeAll, formatViolations, type Violation } from '../domain/violations.ts'
import { makeVerifier, type Verifier } from '../domain/gateway/signing.ts'

/** The merchants the sandbox knows: `merchant_id` → the public key that verifies their requests. */
export type MerchantRegistry = {
  readonly verifier: (merchantId: string) => Verifier | undefined
  /** Adds or replaces a merchant; `left` when the id is not 18 digits starting with 14. */
  readonly register: (merchantId: string, publicKey: KeyObject) => E.Either<string, void>
  readonly ids: () => ReadonlyArray<string>
}

/** `left` with the rule when `id` is not a `merchant_id` (Conventions: 18 digits starting with 14). */
export const checkMerchantId = (id: string): E.Either<string, string> =>
  E.mapLeft((vs: ReadonlyArray<Violation>) => `merchant id ${JSON.stringify(id)} ${formatViolations(vs)}`)(decodeAll(MerchantId, id))

export const makeMerchantRegistry = (canonicalizer: Canonicalizer, initial: ReadonlyMap<string, KeyObject>): MerchantRegistry => {
  const verifiers = new Map<string, Verifier>()
  const register = (merchantId: string, publicKey: KeyObject): E.Either<string, void> => {
    const id = checkMerchantId(merchantId)
    if (E.isLeft(id)) return id
    verifiers.set(merchantId, makeVerifier(canonicalizer, publicKey))
    return E.right(undefined)
  }
  for (const [id, key] of initial) {
    const registered = register(id, key)
    // The composition root checks the ids first; a bad one here is a defect.
    if (E.isLeft(registered)) throw new Error(registered.left)
  }
  return {
    verifier: (id) => verifiers.get(id),
    register,
    ids: () => [...verifiers.keys()],
  }
}
