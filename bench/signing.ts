import * as E from 'fp-ts/lib/Either.js'
import { satangCanonicalV1 } from '../src/domain/gateway/canonical.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier } from '../src/domain/gateway/signing.ts'
import { loadSigningVectors } from '../test/support/vectors.ts'
import type { BenchResult } from './types.ts'

const perSecond = (iterations: number, fn: () => void): number => {
  for (let i = 0; i < Math.min(200, iterations); i++) fn() // warm-up
  const start = process.hrtime.bigint()
  for (let i = 0; i < iterations; i++) fn()
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  return Math.round(iterations / seconds)
}

/** Canonicalisation, signing and verification of a direct-payment request (RSA-2048, SHA-256). */
export const run = async (): Promise<ReadonlyArray<BenchResult>> => {
  const v = loadSigningVectors()
  const c = v.cases[0]
  const priv = loadPrivateKey(v.keys.merchant.private_key_pem)
  const pub = loadPublicKey(v.keys.merchant.public_key_pem)
  if (c === undefined || E.isLeft(priv) || E.isLeft(pub)) throw new Error('signing vectors unusable')
  const signer = makeSigner(satangCanonicalV1, priv.right)
  const verifier = makeVerifier(satangCanonicalV1, pub.right)
  const sig = signer.sign(c.fields)
  return [
    { name: 'canonical strings/s', value: perSecond(50_000, () => satangCanonicalV1.canonicalize(c.fields)), unit: 'ops/s' },
    { name: 'RSA-2048 signs/s (1 core)', value: perSecond(1_000, () => signer.sign(c.fields)), unit: 'ops/s' },
    { name: 'RSA-2048 verifies/s (1 core)', value: perSecond(10_000, () => verifier.verify(c.fields, sig)), unit: 'ops/s' },
  ]
}
