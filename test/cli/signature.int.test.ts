import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli.ts'
import { loadSigningVectors } from '../support/vectors.ts'

const vectors = loadSigningVectors()
const dir = mkdtempSync(join(tmpdir(), 'satang-cli-'))
const keyFile = (who: 'merchant' | 'gateway', kind: 'private' | 'public'): string => join(dir, `${who}-${kind}.pem`)

beforeAll(() => {
  for (const who of ['merchant', 'gateway'] as const) {
    writeFileSync(keyFile(who, 'private'), vectors.keys[who].private_key_pem)
    writeFileSync(keyFile(who, 'public'), vectors.keys[who].public_key_pem)
  }
})

describe('satang --help', () => {
  it('lists the commands', async () => {
    const r = await runCli(['--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^\s+signature\b/m)
  })
  it('signature --help lists canonical, sign and verify', async () => {
    const r = await runCli(['signature', '--help'])
    expect(r.code).toBe(0)
    for (const sub of ['canonical', 'sign', 'verify']) expect(r.stdout).toMatch(new RegExp(`^\\s+${sub}\\b`, 'm'))
  })
})

describe.each(vectors.cases.map((c) => [c.name, c] as const))('vector %s', (_name, c) => {
  it('canonical prints the canonical string exactly (fields on stdin)', async () => {
    const r = await runCli(['signature', 'canonical'], { stdin: JSON.stringify(c.fields) })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${c.canonical}\n`)
  })
  it('sign reproduces the signature (fields from --fields FILE)', async () => {
    const file = join(dir, `${c.name.replace(/\W+/g, '-')}.json`)
    writeFileSync(file, JSON.stringify(c.fields))
    const r = await runCli(['signature', 'sign', '--fields', file, '--private-key', keyFile(c.signer, 'private')])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${c.signature}\n`)
  })
  it('verify accepts it with --signature and exits 0', async () => {
    const r = await runCli(['signature', 'verify', '--public-key', keyFile(c.signer, 'public'), '--signature', c.signature], { stdin: JSON.stringify(c.fields) })
    expect(r.stdout).toBe('valid\n')
    expect(r.code).toBe(0)
  })
})

describe('verify rejects', () => {
  it.each(vectors.tampered.map((c) => [c.name, c] as const))('tampered %s (sign field of the fields): exit 1 with a one-line reason', async (_n, c) => {
    const r = await runCli(['signature', 'verify', '--public-key', keyFile(c.signer, 'public')], { stdin: JSON.stringify(c.fields) })
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^invalid: .+\n$/)
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
  })
  it('a valid signature checked against the wrong key', async () => {
    const c = vectors.cases.find((x) => x.signer === 'gateway')
    if (c === undefined) throw new Error('no gateway-signed vector')
    const r = await runCli(['signature', 'verify', '--json', '--public-key', keyFile('merchant', 'public'), '--signature', c.signature], { stdin: JSON.stringify(c.fields) })
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toEqual({ valid: false, reason: 'signature does not match the canonical string for this public key' })
  })
  it('no signature at all: the reason names both places one can come from', async () => {
    const r = await runCli(['signature', 'verify', '--public-key', keyFile('gateway', 'public')], { stdin: '{"a":"1"}' })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('invalid: no signature: neither --signature nor a sign field was given\n')
  })
})

describe('bad input: exit 2 and a message that names the problem', () => {
  it('fields that are not JSON', async () => {
    const r = await runCli(['signature', 'canonical'], { stdin: '{oops' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('fields from stdin are not valid JSON')
  })
  it('fields that are a JSON array', async () => {
    const r = await runCli(['signature', 'canonical'], { stdin: '[1,2]' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('must be a JSON object of field names to values, got an array')
  })
  it('a missing key file', async () => {
    const r = await runCli(['signature', 'verify', '--public-key', join(dir, 'nope.pem'), '--signature', 'AAAA'], { stdin: '{"a":"1"}' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('cannot read public key file')
    expect(r.stderr).toContain('no such file')
  })
  it('a key file that is not a PEM key', async () => {
    const garbage = join(dir, 'garbage.pem')
    writeFileSync(garbage, 'not a key')
    const r = await runCli(['signature', 'sign', '--private-key', garbage], { stdin: '{"a":"1"}' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('not a usable RSA private key')
  })
  it('a missing required option', async () => {
    const r = await runCli(['signature', 'sign'], { stdin: '{"a":"1"}' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("required option '--private-key <file>' not specified")
  })
  it('fields larger than 1 MiB, on stdin or in --fields FILE, and a key file larger than 64 KiB: refused before they are parsed', async () => {
    const big = `{"a":"${'x'.repeat(1024 * 1024)}"}`
    const onStdin = await runCli(['signature', 'canonical'], { stdin: big })
    expect(onStdin.code).toBe(2)
    expect(onStdin.stderr).toContain('the fields on stdin are more than the 1 MiB satang reads of them')
    const file = join(dir, 'big-fields.json')
    writeFileSync(file, big)
    const inFile = await runCli(['signature', 'canonical', '--fields', file])
    expect(inFile.code).toBe(2)
    expect(inFile.stderr).toContain(`fields file ${JSON.stringify(file)} is 1.0 MiB, more than the 1 MiB satang reads of it`)
    const key = join(dir, 'huge-key.pem')
    writeFileSync(key, `${vectors.keys.merchant.private_key_pem}${'\n'.repeat(64 * 1024)}`)
    const keyRead = await runCli(['signature', 'sign', '--private-key', key], { stdin: '{"a":"1"}' })
    expect(keyRead.code).toBe(2)
    expect(keyRead.stderr).toMatch(/private key file ".*huge-key\.pem" is 6\d\.\d KiB, more than the 64 KiB satang reads of it/)
    // Just under the limits, the same commands work.
    const fits = await runCli(['signature', 'canonical'], { stdin: `{"a":"${'x'.repeat(1024 * 1024 - 16)}"}` })
    expect(fits.code, fits.stderr).toBe(0)
  })
  it('an unknown canonicalizer', async () => {
    const r = await runCli(['signature', 'canonical', '--canonicalizer', 'md5-style'], { stdin: '{"a":"1"}' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--canonicalizer must be one of satang-canonical-v1')
  })
})
