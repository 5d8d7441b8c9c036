import { describe, expect, it } from 'vitest'
import { paymentObservationKey } from '../../src/domain/order/stream.ts'
import { refundObservationKey } from '../../src/domain/refund/stream.ts'
import { duplicateEvents, findLeaks, forgedStateChanges, lostWrites, pemNeedles, rejectedReplays, spread, type LoggedEvent } from './checks.ts'
import { reportTable, type ChaosReport } from './report.ts'
import { logLinesOfRequests, requestIdOf } from './traffic.ts'

const M = '140000000000000001'
let ids = 0
const ev = (streamName: string, type: string, data: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): LoggedEvent => ({ streamName, type, eventId: `e-${String(++ids)}`, data, metadata })

const payment = { merchant_id: M, merchant_order_id: 'A-1', order_id: '261125000000000001', order_status: 'PS', notify_type: 'PAYMENT' }
const refund = { merchant_id: M, merchant_refund_id: 'R-1', refund_order_id: '261125000000000002', refund_status: 'RS', notify_type: 'REFUND' }
const paymentKey = paymentObservationKey('notification', payment)
const refundKey = refundObservationKey('notification', refund)

const completeLog = (): LoggedEvent[] => [
  ev(`order-${M}-A-1`, 'OrderCreated'),
  ev(`order-${M}-A-1`, 'PaymentRequested'),
  ev(`order-${M}-A-1`, 'PaymentRequestAccepted'),
  ev(`order-${M}-A-1`, 'NotificationReceived', { observationKey: paymentKey }),
  ev(`order-${M}-A-1`, 'StatusObserved', { observationKey: paymentKey }, { signature: { verified: true } }),
  ev(`refund-${M}-R-1`, 'RefundTracked'),
  ev(`refund-${M}-R-1`, 'NotificationReceived', { observationKey: refundKey }),
]

const acked = { merchantId: M, creates: new Map([['A-1', 201]]), refundsTracked: new Set(['R-1']), notifications: [payment, refund, payment] }

describe('lostWrites', () => {
  it('finds nothing lost when every acknowledged write is in the log (a notification acknowledged twice counts once)', () => {
    expect(lostWrites(completeLog(), acked)).toEqual([])
  })

  it('names each acknowledged write whose event is missing', () => {
    const log = completeLog().filter((e) => e.type !== 'PaymentRequestAccepted' && !(e.streamName.startsWith('refund-') && e.type === 'NotificationReceived') && e.type !== 'RefundTracked')
    const lost = lostWrites(log, acked)
    expect(lost.map((l) => l.missing)).toEqual([`PaymentRequestAccepted in order-${M}-A-1`, `RefundTracked in refund-${M}-R-1`, `NotificationReceived ${refundKey} in refund-${M}-R-1`])
  })

  it('does not take a notification of another status for the one acknowledged', () => {
    const log = completeLog().map((e) => (e.type === 'NotificationReceived' && e.streamName.startsWith('order-') ? { ...e, data: { observationKey: paymentObservationKey('notification', { ...payment, order_status: 'WP' }) } } : e))
    expect(lostWrites(log, acked).map((l) => l.id)).toEqual(['A-1'])
  })

  it('needs no PaymentRequestAccepted for a create answered 202 (outcome unknown)', () => {
    const log = completeLog().filter((e) => e.type !== 'PaymentRequestAccepted')
    expect(lostWrites(log, { ...acked, creates: new Map([['A-1', 202]]) })).toEqual([])
  })
})

describe('duplicateEvents', () => {
  it('finds none in a log where each fact is recorded once', () => {
    expect(duplicateEvents(completeLog())).toEqual([])
  })

  it('finds a once-per-stream fact recorded twice, the same observation twice, and one event id stored twice', () => {
    const log = completeLog()
    const again = log[3]
    if (again === undefined) throw new Error('no event')
    log.push(ev(`order-${M}-A-1`, 'OrderCreated'), ev(`order-${M}-A-1`, 'NotificationReceived', { observationKey: paymentKey }), { ...again })
    const dups = duplicateEvents(log)
    expect(dups).toContainEqual({ stream: `order-${M}-A-1`, fact: 'OrderCreated', events: 2 })
    expect(dups).toContainEqual({ stream: `order-${M}-A-1`, fact: `NotificationReceived ${paymentKey}`, events: 3 })
    expect(dups).toContainEqual({ stream: '(log)', fact: `event id ${again.eventId}`, events: 2 })
  })

  it('does not count two observations of one status from different sources, nor several rejected callbacks', () => {
    const log = [...completeLog(), ev(`order-${M}-A-1`, 'StatusObserved', { observationKey: paymentObservationKey('query', payment) }), ev(`order-${M}-A-1`, 'CallbackRejected', { payload: {} }), ev(`order-${M}-A-1`, 'CallbackRejected', { payload: {} })]
    expect(duplicateEvents(log)).toEqual([])
  })
})

describe('forgedStateChanges and rejectedReplays', () => {
  it('reports a state change recorded from a callback whose signature did not verify', () => {
    const forged = ev(`order-${M}-A-2`, 'StatusObserved', { observationKey: 'x' }, { signature: { verified: false, reason: 'bad' } })
    expect(forgedStateChanges([...completeLog(), forged, ev(`order-${M}-A-2`, 'CallbackRejected', {}, { signature: { verified: false } })])).toEqual([forged])
  })

  it('counts rejected callbacks per distinct body and stream', () => {
    const r = (payload: unknown, stream = `order-${M}-A-1`): LoggedEvent => ev(stream, 'CallbackRejected', { payload })
    expect(rejectedReplays([r({ a: 1 }), r({ a: 1 }), r({ a: 2 }), r({ a: 1 }, `order-${M}-A-2`)])).toEqual({ events: 4, distinctBodies: 3 })
  })

  it('knows a quarantined callback by its fingerprint, wherever it was kept', () => {
    const q = (fingerprint: string, stream: string): LoggedEvent => ev(stream, 'CallbackQuarantined', { fingerprint, payload: { a: 1 } })
    expect(rejectedReplays([q('f1', 'quarantine-notification-2026-11-25'), q('f1', 'quarantine-notification-2026-11-26'), q('f2', 'quarantine-notification-2026-11-25')])).toEqual({ events: 3, distinctBodies: 2 })
  })
})

describe('findLeaks', () => {
  const logs = [
    { name: 'satang.1.stderr.log', text: '{"msg":"ok"}\n{"msg":"answered 401","token":"chaos-SECRET-TOKEN-123"}\n{"phone":"0812345678"}' },
    { name: 'sandbox.1.stderr.log', text: 'order 26112508123456789 created\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ' },
  ]

  it('finds each needle with its file and line, and nothing where there is none', () => {
    const needles = [
      { what: 'the API token', value: 'chaos-SECRET-TOKEN-123' },
      { what: 'a phone', value: '0812345678' },
      ...pemNeedles('a private key', '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ\n-----END PRIVATE KEY-----\n'),
      { what: 'a name', value: 'Somchai Qwerty' },
    ]
    expect(findLeaks(logs, needles)).toEqual([
      { what: 'the API token', where: 'satang.1.stderr.log', line: 2 },
      { what: 'a phone', where: 'satang.1.stderr.log', line: 3 },
      { what: 'a private key', where: 'sandbox.1.stderr.log', line: 2 },
    ])
    expect(findLeaks(logs, [{ what: 'a name', value: 'Somchai Qwerty' }])).toEqual([])
  })

  it('does not find a number inside a longer number', () => {
    expect(findLeaks(logs, [{ what: 'a phone', value: '0812345678' }, { what: 'an id', value: '2611250812345' }])).toEqual([{ what: 'a phone', where: 'satang.1.stderr.log', line: 3 }])
  })

  it('treats regular-expression characters in a value literally', () => {
    expect(findLeaks([{ name: 'x', text: 'a+b@example.test' }], [{ what: 'an e-mail', value: 'a+b@example.test' }, { what: 'a pattern', value: 'a.b@example.test' }])).toEqual([{ what: 'an e-mail', where: 'x', line: 1 }])
  })
})

describe('spread and the table', () => {
  it('gives min, median and max', () => {
    expect(spread([])).toBeNull()
    expect(spread([300, 100, 200])).toEqual({ min: 100, median: 200, max: 300 })
    expect(spread([400, 100, 200, 300])).toEqual({ min: 100, median: 250, max: 400 })
  })

  it('prints faults with their recovery, skipped faults with the reason, and every failed check', () => {
    const report: ChaosReport = {
      run: { form: 'short', loadSeconds: 40, totalSeconds: 80, tag: 'abc123', dir: '/tmp/x', startedAt: '2026-11-25T00:00:00.000Z' },
      faults: [
        { kind: 'satang-sigkill', injected: 2, recovered: 2, ttrMs: [4000, 5000], details: [] },
        { kind: 'disk-full', injected: 0, recovered: 0, ttrMs: [], skipped: 'needs root', details: [] },
        { kind: 'sandbox-reorder', injected: 3, recovered: null, ttrMs: [], details: [] },
      ],
      requests: [{ route: 'POST /v1/payments', sent: 10, acknowledged: 8, statuses: { '0': 1, '201': 8, '503': 1 } }],
      acknowledged: { creates: 8, refunds: 1, notifications: 5 },
      lost: 0,
      duplicated: 1,
      checks: [{ name: 'duplicate events', ok: false, detail: '1: x' }],
      violations: ['duplicate events: 1: x'],
      ok: false,
    }
    const table = reportTable(report)
    expect(table).toMatch(/satang-sigkill\s+2\s+2\s+4\.0 s \/ 4\.5 s \/ 5\.0 s/)
    expect(table).toMatch(/disk-full\s+0\s+-\s+skipped: needs root/)
    expect(table).toMatch(/sandbox-reorder\s+3\s+-\s+-/)
    expect(table).toMatch(/POST \/v1\/payments\s+10\s+8\s+none: 1, 201: 8, 503: 1/)
    expect(table).toContain('lost: 0; duplicated events: 1')
    expect(table).toContain('FAIL  duplicate events: 1: x')
    expect(table).toContain('chaos run FAILED: 1 violation(s)')
  })
})

describe('logLinesOfRequests', () => {
  const id = '0b7e4a8e-4a4e-4f1e-9d4c-1f2a3b4c5d6e'
  const logs = [
    { name: 'satang.3.stdout.log', text: `{"level":30,"reqId":"other","msg":"fine"}\n{"level":50,"reqId":"${id}","err":{"message":"boom"},"msg":"request failed"}\n` },
    { name: 'sandbox.1.stdout.log', text: '{"level":30,"msg":"unrelated"}\n' },
  ]

  it('finds the log lines of each request named in an unexpected answer, with the capture they are in', () => {
    const found = logLinesOfRequests([`POST /v1/payments CH-1: 500 {"error":"internal"} [request ${id}]`], logs)
    expect(found).toEqual([`satang.3.stdout.log: {"level":50,"reqId":"${id}","err":{"message":"boom"},"msg":"request failed"}`])
  })

  it('finds nothing when no answer carried a request id', () => {
    expect(logLinesOfRequests(['sandbox pay X: 500 nope'], logs)).toEqual([])
  })

  it('requestIdOf names the x-request-id of an answer, and nothing without one', () => {
    expect(requestIdOf({ status: 500, text: '', json: null, headers: { 'x-request-id': id } })).toBe(` [request ${id}]`)
    expect(requestIdOf({ status: 0, text: '', json: null, headers: {} })).toBe('')
  })
})
