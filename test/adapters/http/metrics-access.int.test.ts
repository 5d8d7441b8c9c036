import { createHash } from 'node:crypto'
import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, describe, expect, it } from 'vitest'
import { decodeConfig } from '../../../src/config.ts'
import { freePort } from '../../support/ports.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../../support/satang-with-sandbox.ts'

/**
 * Acceptance (issue 22, item 9): `/metrics` shows open breaks, money at stake and the last verdict, so
 * it can be moved off the main port (`SATANG_METRICS_PORT`, bound to `SATANG_METRICS_HOST`) and put
 * behind a bearer token (`SATANG_METRICS_TOKEN_FILE`). Real satang, real HTTP.
 */

const running: SatangWithSandbox[] = []
const dir = mkdtempSync(join(tmpdir(), 'satang-metrics-access-'))
afterAll(async () => {
  for (const s of running.splice(0)) await s.stop()
  rmSync(dir, { recursive: true, force: true })
})

const get = async (url: string, token?: string): Promise<{ status: number; text: string; headers: Headers }> => {
  const res = await fetch(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })
  return { status: res.status, text: await res.text(), headers: res.headers }
}

describe('/metrics access', () => {
  it('with SATANG_METRICS_PORT, /metrics is served on that port (127.0.0.1) and 404 on the main port', async () => {
    const metricsPort = await freePort()
    const s = await startSatangWithSandbox('metrics-port', { SATANG_METRICS_PORT: String(metricsPort) })
    running.push(s)
    expect(s.satang.metricsUrl).toBe(`http://127.0.0.1:${String(metricsPort)}`)
    const there = await get(`${s.satang.metricsUrl}/metrics`)
    expect(there.status).toBe(200)
    expect(there.text).toContain('satang_reconciliation_open_breaks')
    expect(there.text).toContain('satang_projection_lag_events')

    const main = await get(`${s.satang.httpUrl}/metrics`)
    expect(main.status).toBe(404)
    expect(JSON.parse(main.text)).toMatchObject({ error: 'not_found' })
    expect(main.text).not.toContain('satang_')
    // The main port keeps everything else; the metrics port serves nothing else.
    expect((await get(`${s.satang.httpUrl}/healthz`)).status).toBe(200)
    expect((await get(`${s.satang.metricsUrl}/healthz`)).status).toBe(404)
    expect((await get(`${s.satang.metricsUrl}/v1/payments/X-1`)).status).toBe(404)
  })

  it('with SATANG_METRICS_TOKEN_FILE, /metrics answers 401 without the token or with a wrong one, 200 with it; the file is generated (0600) when absent', async () => {
    const file = join(dir, 'metrics-token')
    const t = await startSatangWithSandbox('metrics-token', { SATANG_METRICS_TOKEN_FILE: file })
    running.push(t)
    const url = `${t.satang.metricsUrl}/metrics`
    expect(t.satang.metricsUrl).toBe(t.satang.httpUrl)

    const none = await get(url)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer /)
    expect(JSON.parse(none.text)).toMatchObject({ error: 'unauthorized' })
    expect(none.text).not.toContain('satang_reconciliation')
    expect((await get(url, 'not-the-metrics-token-0123456789')).status).toBe(401)
    // An API token is not the metrics token.
    expect((await get(url, 'satang-with-sandbox-token-0123456789')).status).toBe(401)

    const token = readFileSync(file, 'utf8').trim()
    expect(token.length).toBeGreaterThanOrEqual(32)
    expect(lstatSync(file).mode & 0o777).toBe(0o600)
    const ok = await get(url, token)
    expect(ok.status).toBe(200)
    expect(ok.text).toContain('satang_reconciliation_open_breaks')
  })

  it('SATANG_METRICS_TOKEN_FILE may hold the digest sha256:<hex> of the token instead of the token', async () => {
    const token = 'metrics-scraper-token-0123456789abcdef'
    const file = join(dir, 'metrics-token.sha256')
    writeFileSync(file, `sha256:${createHash('sha256').update(token).digest('hex')}\n`, { mode: 0o600 })
    // On a port of its own too: the token guards /metrics wherever it is served.
    const t = await startSatangWithSandbox('metrics-digest', { SATANG_METRICS_PORT: String(await freePort()), SATANG_METRICS_TOKEN_FILE: file })
    running.push(t)
    expect((await get(`${t.satang.metricsUrl}/metrics`)).status).toBe(401)
    expect((await get(`${t.satang.metricsUrl}/metrics`, `sha256:${createHash('sha256').update(token).digest('hex')}`)).status).toBe(401)
    expect((await get(`${t.satang.metricsUrl}/metrics`, token)).status).toBe(200)
  })

  it('SATANG_METRICS_PORT equal to SATANG_HTTP_PORT is refused, naming the rule', () => {
    const decoded = decodeConfig({ SATANG_HTTP_PORT: '9100', SATANG_METRICS_PORT: '9100' })
    expect(E.isLeft(decoded) && decoded.left).toEqual([{ variable: 'SATANG_METRICS_PORT', source: 'environment', rule: 'must differ from SATANG_HTTP_PORT (unset it to serve /metrics there)' }])
  })
})
