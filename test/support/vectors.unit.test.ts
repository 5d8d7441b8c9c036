import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadSigningVectors, VECTORS_PATH } from './vectors.ts'

// The copy in test/fixtures is the design team's published file, byte for byte (test/fixtures/README.md).
const PUBLISHED_SHA256 = '7b9ae846833d08b169d68e2bf4125fbf08665555a5d0fd0ec510b887bf74d98d'

describe('signing vectors in test/fixtures', () => {
  it('are the published vectors, byte-identical, and inside the repository', () => {
    expect(VECTORS_PATH.endsWith('/test/fixtures/signing.json')).toBe(true)
    expect(createHash('sha256').update(readFileSync(VECTORS_PATH)).digest('hex')).toBe(PUBLISHED_SHA256)
    expect(readFileSync(new URL('../fixtures/README.md', import.meta.url), 'utf8')).toContain(PUBLISHED_SHA256)
  })

  it('decode to both key pairs, signed cases and tampered cases', () => {
    const v = loadSigningVectors()
    expect(v.convention).toMatch(/canonical/i)
    expect(v.cases.length).toBeGreaterThan(0)
    expect(v.tampered.length).toBeGreaterThan(0)
    expect(new Set(v.cases.map((c) => c.signer))).toEqual(new Set(['merchant', 'gateway']))
  })
})
