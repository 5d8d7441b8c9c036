import * as E from 'fp-ts/lib/Either.js'
import { afterEach, describe, expect, it } from 'vitest'
import { breaksRequestOf, daysRequestOf, decodePageCursor, encodePageCursor, runsRequestOf } from '../../../src/adapters/http/reconciliation-routes.ts'
import { bearer, makeTestApi, type TestApi } from './support.ts'

describe('the reconciliation reads check their query parameters all at once', () => {
  it('breaks: class, status, age, date, item and page', () => {
    expect(breaksRequestOf({ class: 'amount_mismatch', status: 'open', min_age_days: '8', date: '2026-01-31', item_id: 'ORD-1', limit: '10' })).toEqual(
      E.right({ filters: { class: 'amount_mismatch', status: 'open', minAgeDays: 8, date: '2026-01-31', itemId: 'ORD-1' }, page: { limit: 10, after: null } }),
    )
    const bad = breaksRequestOf({ class: 'typo', status: 'closed', min_age_days: '-1', date: '2026-02-30', limit: '0', cursor: '!!', extra: 'x' })
    expect(E.isLeft(bad) ? bad.left.map((v) => v.path).sort() : []).toEqual(['class', 'cursor', 'date', 'extra', 'limit', 'min_age_days', 'status'])
  })
  it('days: from and to are required, ordered and at most 366 days apart', () => {
    expect(daysRequestOf({ from: '2026-01-01', to: '2026-01-31' })).toEqual(E.right({ from: '2026-01-01', to: '2026-01-31' }))
    expect(daysRequestOf({})).toMatchObject({ _tag: 'Left', left: [{ path: 'from' }, { path: 'to' }] })
    expect(daysRequestOf({ from: '2026-02-01', to: '2026-01-01' })).toMatchObject({ _tag: 'Left', left: [{ path: 'to', rule: 'must not be before from' }] })
    expect(daysRequestOf({ from: '2025-01-01', to: '2026-12-31' })).toMatchObject({ _tag: 'Left', left: [{ path: 'to' }] })
  })
  it('runs: a page; cursors round-trip and a forged one is refused', () => {
    const cursor = { at: '2026-01-31T17:30:00.000Z', id: 'run-1' }
    expect(decodePageCursor(encodePageCursor(cursor))).toEqual(cursor)
    expect(decodePageCursor('bm9wZQ')).toBeNull()
    expect(runsRequestOf({ cursor: encodePageCursor(cursor) })).toEqual(E.right({ limit: 50, after: cursor }))
  })
})

describe('acknowledging over HTTP', () => {
  let api: TestApi
  afterEach(async () => {
    await api.app.close()
  })
  it('needs the scope reconcile:write and a reason; the token name is the actor', async () => {
    api = makeTestApi()
    const url = '/v1/reconciliation/breaks/6f1c2e1a-0000-4000-8000-000000000001/acknowledge'
    const forbidden = await api.app.inject({ method: 'POST', url, headers: { ...bearer('all'), 'content-type': 'application/json' }, payload: { reason: 'x' } })
    expect(forbidden).toMatchObject({ statusCode: 403 })
    expect(forbidden.json()).toMatchObject({ required_scope: 'reconcile:write' })
    const noReason = await api.app.inject({ method: 'POST', url, headers: { ...bearer('finance'), 'content-type': 'application/json' }, payload: {} })
    expect(noReason.statusCode).toBe(400)
    const done = await api.app.inject({ method: 'POST', url, headers: { ...bearer('finance'), 'content-type': 'application/json' }, payload: { reason: 'bank fee' } })
    expect(done.statusCode).toBe(200)
    expect(done.json()).toMatchObject({ acknowledged_by: 'finance', reason: 'bank fee' })
  })
  it('a read of a read model that cannot be reached is 503, never a 500', async () => {
    api = makeTestApi()
    const r = await api.app.inject({ method: 'GET', url: '/v1/reconciliation/runs', headers: bearer('reader') })
    expect(r.statusCode).toBe(503)
  })
})
