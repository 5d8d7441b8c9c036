import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import {
  callbackQuarantined,
  parseQuarantineStreamName,
  quarantineCallback,
  quarantineNaturalKey,
  quarantineStreamName,
  QUARANTINED_TEXT_LIMIT,
  utf8Head,
  withDayTotals,
  type Quarantine,
} from '../../../src/domain/events/common/callback-quarantined.ts'
import { MERCHANT_ID } from '../support/values.ts'

/* A callback satang did not trust: what its event keeps (bounded, escaped, payer data redacted), its stream and natural key. */

const RECEIVED = new Date('2026-01-31T18:00:00.000Z') // 01:00 on 1 February in Bangkok

const aQuarantine = (o: Partial<Quarantine> = {}): Quarantine => ({
  callback: 'payment_notification',
  reason: 'bad_signature',
  detail: 'signature does not match the gateway key',
  violations: [],
  fingerprint: 'f'.repeat(64),
  signatureVerified: false,
  receivedAt: RECEIVED,
  fields: { merchant_id: MERCHANT_ID, merchant_order_id: 'ORD-1', order_status: 'PS' },
  body: { sha256: 'b'.repeat(64), bytes: 90, text: 'ignored when there are fields' },
  headBytes: 2048,
  ...o,
})

describe('a quarantined callback', () => {
  it('keeps the ids it claims, its body hash and size, and its fields as JSON for the head', () => {
    expect(quarantineCallback(aQuarantine())).toStrictEqual({
      type: 'CallbackQuarantined',
      data: {
        callback: 'payment_notification',
        reason: 'bad_signature',
        detail: 'signature does not match the gateway key',
        violations: [],
        fingerprint: 'f'.repeat(64),
        signatureVerified: false,
        claimed: { merchantId: MERCHANT_ID, merchantOrderId: 'ORD-1', merchantRefundId: null, merchantSubscribeId: null },
        receivedAt: RECEIVED,
        bodySha256: 'b'.repeat(64),
        bodyBytes: 90,
        bodyHead: JSON.stringify({ merchant_id: MERCHANT_ID, merchant_order_id: 'ORD-1', order_status: 'PS' }),
        dayTotals: [],
      },
    })
  })

  it('claims a refund or a subscription by its own id; an empty or non-text id is no claim', () => {
    const fields = { merchant_id: '', merchant_order_id: 5, merchant_refund_id: 'RF-1', merchant_subscribe_id: 'SUB-1' }
    expect(quarantineCallback(aQuarantine({ fields })).data.claimed).toStrictEqual({ merchantId: null, merchantOrderId: null, merchantRefundId: 'RF-1', merchantSubscribeId: 'SUB-1' })
  })

  it('with no fields: the text received, escaped, for the head; an empty body keeps no head; no claims', () => {
    const q = aQuarantine({ fields: null, body: { sha256: 'c'.repeat(64), bytes: 7, text: 'not\u0000json' } })
    expect(quarantineCallback(q).data).toMatchObject({ bodyHead: 'not\\u0000json', claimed: { merchantId: null, merchantOrderId: null, merchantRefundId: null, merchantSubscribeId: null } })
    expect(quarantineCallback(aQuarantine({ fields: null, body: { sha256: 'c'.repeat(64), bytes: 0, text: '' } })).data.bodyHead).toBeNull()
  })

  it('the head is cut at headBytes', () => {
    const q = aQuarantine({ fields: null, body: { sha256: 'c'.repeat(64), bytes: 100, text: 'x'.repeat(100) }, headBytes: 10 })
    expect(quarantineCallback(q).data.bodyHead).toBe('x'.repeat(10))
  })

  it('texts are clipped: ids at 128 characters, the detail and rules at 256, saying how much more there was', () => {
    const long = 'i'.repeat(QUARANTINED_TEXT_LIMIT + 5)
    const e = quarantineCallback(aQuarantine({ fields: { merchant_id: long }, detail: 'd'.repeat(300), violations: [{ path: 'p'.repeat(QUARANTINED_TEXT_LIMIT), rule: 'r'.repeat(257) }] }))
    expect(e.data.claimed.merchantId).toBe(`${'i'.repeat(128)}…[5 more]`)
    expect(e.data.detail).toBe(`${'d'.repeat(256)}…[44 more]`)
    expect(e.data.violations).toStrictEqual([{ path: 'p'.repeat(128), rule: `${'r'.repeat(256)}…[1 more]` }])
  })

  it('keeps 32 violations and says how many more there were', () => {
    const violations = Array.from({ length: 35 }, (_, i) => ({ path: `f${String(i)}`, rule: 'is required' }))
    const kept = quarantineCallback(aQuarantine({ violations })).data.violations
    expect(kept).toHaveLength(33)
    expect(kept.slice(0, 2)).toStrictEqual([
      { path: 'f0', rule: 'is required' },
      { path: 'f1', rule: 'is required' },
    ])
    expect(kept[31]).toStrictEqual({ path: 'f31', rule: 'is required' })
    expect(kept[32]).toStrictEqual({ path: '', rule: '…and 3 more violations' })
    expect(quarantineCallback(aQuarantine({ violations: violations.slice(0, 32) })).data.violations).toStrictEqual(violations.slice(0, 32))
  })

  it('withDayTotals adds the totals and keeps everything else', () => {
    const e = quarantineCallback(aQuarantine())
    expect(withDayTotals(e, [{ callback: 'payment_notification', events: 2, bytes: 900 }])).toStrictEqual({ type: 'CallbackQuarantined', data: { ...e.data, dayTotals: [{ callback: 'payment_notification', events: 2, bytes: 900 }] } })
  })

  it('version 1 (the payload kept whole) is read as version 2: no hash or size, the payload as the head, no totals', () => {
    const v1 = { ...callbackQuarantined.encode(quarantineCallback(aQuarantine()).data).data }
    const { bodySha256: _, bodyBytes: __, bodyHead: ___, dayTotals: ____, ...common } = v1
    const read = callbackQuarantined.decode(1, { ...common, payload: { order_status: 'PS' } })
    expect(E.isRight(read) ? read.right.data : read.left).toMatchObject({ bodySha256: null, bodyBytes: null, bodyHead: '{"order_status":"PS"}', dayTotals: [] })
    const none = callbackQuarantined.decode(1, { ...common, payload: null })
    expect(E.isRight(none) ? none.right.data : none.left).toMatchObject({ bodyHead: null })
  })
})

describe('the quarantine stream', () => {
  it('one stream per source and Bangkok day, parsed back; other names are not one', () => {
    expect(quarantineStreamName('notification', RECEIVED)).toBe('quarantine-notification-2026-02-01')
    expect(quarantineStreamName('redirect', RECEIVED)).toBe('quarantine-redirect-2026-02-01')
    expect(parseQuarantineStreamName('quarantine-redirect-2026-02-01')).toStrictEqual({ source: 'redirect', day: '2026-02-01' })
    expect(parseQuarantineStreamName('quarantine-notification-2026-02-01')).toStrictEqual({ source: 'notification', day: '2026-02-01' })
    for (const s of ['quarantine-email-2026-02-01', 'quarantine-redirect-2026-2-1', 'xquarantine-redirect-2026-02-01', 'quarantine-redirect-2026-02-01x']) expect(parseQuarantineStreamName(s)).toBeNull()
  })

  it('the natural key: stream, type, fingerprint', () => {
    expect(quarantineNaturalKey('quarantine-redirect-2026-02-01', 'ab')).toBe('quarantine-redirect-2026-02-01:CallbackQuarantined:ab')
  })
})

describe('utf8Head', () => {
  it('keeps a text that fits, and cuts a longer one before a character it would split', () => {
    expect(utf8Head('abc', 3)).toBe('abc')
    expect(utf8Head('abcd', 3)).toBe('abc')
    expect(utf8Head('กขค', 9)).toBe('กขค')
    expect(utf8Head('กขค', 8)).toBe('กข')
    expect(utf8Head('กขค', 7)).toBe('กข')
    expect(utf8Head('กขค', 6)).toBe('กข')
    expect(utf8Head('กขค', 5)).toBe('ก')
    expect(utf8Head('ก', 2)).toBe('')
    expect(utf8Head('a😀', 4)).toBe('a')
    expect(utf8Head('😀', 0)).toBe('')
  })
})
