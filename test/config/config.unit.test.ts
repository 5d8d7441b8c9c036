import { describe, expect, it } from 'vitest'
import * as E from 'fp-ts/lib/Either.js'
import { configWarnings, decodeConfig, formatConfigErrors, settingDocs } from '../../src/config.ts'

describe('config', () => {
  it('defaults describe an embedded setup: no database URL, no gateway URL, postgres event store', () => {
    const c = decodeConfig({})
    expect(E.isRight(c)).toBe(true)
    if (E.isRight(c)) {
      expect(c.right.SATANG_DATABASE_URL).toBeUndefined()
      expect(c.right.SATANG_GATEWAY_BASE_URL).toBeUndefined()
      expect(c.right.SATANG_EVENT_STORE).toBe('postgres')
      expect(c.right.SATANG_HTTP_PORT).toBe(8080)
      expect(c.right.SATANG_CANONICALIZER).toBe('satang-canonical-v1')
    }
  })

  it('the environment wins over the config file', () => {
    const c = decodeConfig({ SATANG_HTTP_PORT: '9000' }, { SATANG_HTTP_PORT: 7000, SATANG_LOG_LEVEL: 'debug' })
    expect(E.isRight(c) && c.right.SATANG_HTTP_PORT).toBe(9000)
    expect(E.isRight(c) && c.right.SATANG_LOG_LEVEL).toBe('debug')
  })

  it('reports every bad variable by name and rule, never its value', () => {
    const secret = 'postgres-but-not-a-url-s3cr3t'
    const c = decodeConfig({ SATANG_HTTP_PORT: '70000', SATANG_DATABASE_URL: secret, SATANG_LOG_LEVEL: 'loud', SATANG_HTTP_PROT: '1' })
    expect(E.isLeft(c)).toBe(true)
    if (E.isLeft(c)) {
      expect(c.left.map((e) => e.variable).sort()).toEqual(['SATANG_DATABASE_URL', 'SATANG_HTTP_PORT', 'SATANG_HTTP_PROT', 'SATANG_LOG_LEVEL'])
      const text = formatConfigErrors(c.left)
      expect(text).toContain('SATANG_HTTP_PORT (environment): must be a whole number from 0 to 65535')
      expect(text).toContain('SATANG_LOG_LEVEL (environment): must be one of fatal, error, warn, info, debug, trace, silent')
      expect(text).toContain('SATANG_HTTP_PROT (environment): is not a satang setting')
      expect(text).not.toContain(secret)
    }
  })

  it('a real gateway needs the merchant id and both keys', () => {
    const c = decodeConfig({ SATANG_GATEWAY_BASE_URL: 'https://gw.example' })
    expect(E.isLeft(c) && c.left.map((e) => e.variable)).toEqual(['SATANG_MERCHANT_ID', 'SATANG_MERCHANT_PRIVATE_KEY_FILE', 'SATANG_GATEWAY_PUBLIC_KEY_FILE'])
  })

  it('merchant id must be 18 digits starting with 14; an unknown file key is reported', () => {
    const c = decodeConfig({ SATANG_MERCHANT_ID: '150000000000000001' }, { SATANG_NOPE: 1 })
    expect(E.isLeft(c) && c.left).toEqual([
      { variable: 'SATANG_NOPE', source: 'config file', rule: 'is not a satang setting' },
      { variable: 'SATANG_MERCHANT_ID', source: 'environment', rule: 'must be 18 digits starting with 14' },
    ])
  })

  it('EventStoreDB needs its URL', () => {
    const c = decodeConfig({ SATANG_EVENT_STORE: 'eventstoredb' })
    expect(E.isLeft(c) && c.left.map((e) => e.variable)).toEqual(['SATANG_EVENTSTOREDB_URL'])
  })

  it('documents every setting', () => {
    for (const s of settingDocs()) expect(s.doc.length).toBeGreaterThan(10)
  })
})

describe('issue 25 settings', () => {
  const decoded = (env: Record<string, string>) => {
    const r = decodeConfig(env)
    if (E.isLeft(r)) throw new Error(formatConfigErrors(r.left))
    return r.right
  }

  it('SATANG_SHUTDOWN_TIMEOUT_MS defaults to 10 s; the deprecated SATANG_STOP_TIMEOUT_MS still sets it, with a warning, and loses to the new name', () => {
    expect(decoded({}).SATANG_SHUTDOWN_TIMEOUT_MS).toBe(10_000)
    expect(configWarnings(decoded({}))).toEqual([])
    const old = decoded({ SATANG_STOP_TIMEOUT_MS: '2500' })
    expect(old.SATANG_SHUTDOWN_TIMEOUT_MS).toBe(2500)
    expect(configWarnings(old)).toEqual([expect.stringContaining('SATANG_STOP_TIMEOUT_MS is deprecated')])
    expect(decoded({ SATANG_STOP_TIMEOUT_MS: '2500', SATANG_SHUTDOWN_TIMEOUT_MS: '4000' }).SATANG_SHUTDOWN_TIMEOUT_MS).toBe(4000)
    expect(decoded({ SATANG_SHUTDOWN_TIMEOUT_MS: '4000' }).SATANG_STOP_TIMEOUT_MS).toBeUndefined()
  })

  it('SATANG_TRUST_PROXY takes addresses and CIDRs (IPv4, IPv6) and names every entry that is not one', () => {
    expect(decoded({}).SATANG_TRUST_PROXY).toBeUndefined()
    expect(decoded({ SATANG_TRUST_PROXY: ' 10.0.0.0/8, 127.0.0.1 ,fd00::/8,::1' }).SATANG_TRUST_PROXY).toEqual(['10.0.0.0/8', '127.0.0.1', 'fd00::/8', '::1'])
    const bad = decodeConfig({ SATANG_TRUST_PROXY: '10.0.0.0/33,lb.example,1.2.3.4/8/1,::1/129' })
    expect(E.isLeft(bad) ? formatConfigErrors(bad.left) : '').toContain('SATANG_TRUST_PROXY (environment): must be a comma-separated list of IP addresses or CIDRs; not one: "10.0.0.0/33", "lb.example", "1.2.3.4/8/1", "::1/129"')
  })

  it('SATANG_READY_MAX_LAG_SECONDS defaults to 60 and must be a whole number of seconds', () => {
    expect(decoded({}).SATANG_READY_MAX_LAG_SECONDS).toBe(60)
    expect(E.isLeft(decodeConfig({ SATANG_READY_MAX_LAG_SECONDS: '0' }))).toBe(true)
  })
})
