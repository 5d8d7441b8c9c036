import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import * as t from 'io-ts'
import { Client } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_JSON_DEPTH } from '../../../src/adapters/http/json-body.ts'
import { makeLogger } from '../../../src/logger.ts'
import { EVENT_STORE_SCHEMA, type Running } from '../../../src/main.ts'
import { freshDatabase } from './database.ts'
import { startTestSatang } from './satang.ts'

/**
 * Issue 22, item 5: JSON nested 2,000 and 50,000 levels deep, on the merchant API and on the gateway's
 * notification callback, through real HTTP on real PostgreSQL with the log captured: 400
 * `invalid_request` naming the limit, nothing logged at error level; the callback is quarantined like
 * any body that cannot be read, and the API appends nothing.
 */

const TOKEN = 'json-depth-int-token-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'satang-depth-'))
let db: Awaited<ReturnType<typeof freshDatabase>>
let satang: Running
let reader: Client
const lines: string[] = []

const objects = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`
const arrays = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`

const post = async (path: string, body: string): Promise<{ readonly status: number; readonly json: unknown }> => {
  const res = await fetch(`${satang.httpUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = text
  }
  return { status: res.status, json }
}

type Stored = { readonly stream: string; readonly type: string; readonly data: unknown }

const lastPosition = async (): Promise<string> => (await reader.query<{ p: string }>(`select coalesce(max(position), 0)::text as p from "${EVENT_STORE_SCHEMA}".events`)).rows[0]?.p ?? '0'
const eventsAfter = async (position: string): Promise<ReadonlyArray<Stored>> =>
  (await reader.query<Stored>(`select stream_name as stream, type, data from "${EVENT_STORE_SCHEMA}".events where position > $1::bigint order by position`, [position])).rows

/** Log lines at error level or above (pino: error 50, fatal 60). */
const errorLines = (): ReadonlyArray<string> =>
  lines.filter((l) => {
    const parsed: unknown = JSON.parse(l)
    return t.type({ level: t.number }).is(parsed) && parsed.level >= 50
  })

beforeAll(async () => {
  db = await freshDatabase('depth')
  reader = new Client({ connectionString: db.url })
  await reader.connect()
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''))
      callback()
    },
  })
  // Nothing in these tests reaches the gateway: a port nothing listens on stands for it.
  satang = await startTestSatang({ databaseUrl: db.url, gatewayUrl: 'http://127.0.0.1:9', dir, token: TOKEN, log: makeLogger({ level: 'info' }, sink) })
}, 60_000)

afterAll(async () => {
  await satang.stop()
  await reader.end()
  await db.drop()
  rmSync(dir, { recursive: true, force: true })
})

const BODIES = [
  ['2,000 levels of objects (12 KB)', objects(2000)],
  ['50,000 levels of arrays (100 KB)', arrays(50_000)],
  [`${String(MAX_JSON_DEPTH + 1)} levels, one past the limit`, objects(MAX_JSON_DEPTH + 1)],
] as const

const depthViolation = { error: 'invalid_request', violations: [{ path: '', rule: `body must not nest objects and arrays more than ${String(MAX_JSON_DEPTH)} levels deep` }] }

describe('JSON nested too deep', () => {
  it.each(BODIES)('%s on /v1: 400 invalid_request naming the limit, nothing appended, nothing logged at error level', async (_name, body) => {
    const before = await lastPosition()
    for (const path of ['/v1/payments', '/v1/checkouts', '/v1/reconciliation/breaks/6f1c2e1a-0000-4000-8000-000000000001/acknowledge']) {
      const answer = await post(path, body)
      expect([path, answer.status, answer.json]).toEqual([path, 400, depthViolation])
    }
    expect(await eventsAfter(before)).toEqual([])
    expect(errorLines()).toEqual([])
  })

  it.each(BODIES)('%s on /callbacks/notifications: 400, quarantined once like any unreadable body, nothing logged at error level', async (_name, body) => {
    const before = await lastPosition()
    const answer = await post('/callbacks/notifications', body)
    expect(answer).toEqual({ status: 400, json: depthViolation })
    const events = await eventsAfter(before)
    expect(events.map((e) => e.type)).toEqual(['CallbackQuarantined'])
    expect(events[0]?.stream).toMatch(/^quarantine-notification-\d{4}-\d{2}-\d{2}$/)
    expect(JSON.stringify(events[0]?.data)).toContain('levels deep')
    expect(errorLines()).toEqual([])
  })

  it('brackets inside strings are text, not nesting: a body whose values hold 5,000 of them is judged on its fields', async () => {
    const answer = await post('/v1/refunds', JSON.stringify({ merchant_refund_id: `R-${'['.repeat(5000)}`, merchant_order_id: '{{{{"\\"[[' }))
    expect(answer.status).toBe(400)
    const paths = t.type({ violations: t.array(t.type({ path: t.string })) }).is(answer.json) ? answer.json.violations.map((v) => v.path) : []
    expect(paths).not.toContain('')
    expect(errorLines()).toEqual([])
  })
})
