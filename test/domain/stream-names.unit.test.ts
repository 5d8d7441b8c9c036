import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { orderStreamName, parseOrderStreamName } from '../../src/domain/order/index.ts'
import { parseRefundableStreamName, parseRefundStreamName, refundableStreamName, refundStreamName } from '../../src/domain/refund/index.ts'
import { parseSubscriptionStreamName, subscriptionStreamName } from '../../src/domain/subscription/index.ts'

/**
 * A stream name is made from a merchant id and the merchant's own id, and read back into the two by the
 * callbacks, the refund ledger and the projections. The merchant's id is any text the gateway allows —
 * line breaks included — so the name must read back into exactly the ids it was made from. (A refund id
 * holding a line feed once made every notification of that refund a 503, forever.)
 */
/** A parser's answer as the [merchant id, own id] pair it read, or null. */
const pairOf =
  <P>(parse: (stream: string) => P | null, ids: (p: P) => readonly [string, string]) =>
  (stream: string): readonly [string, string] | null => {
    const parsed = parse(stream)
    return parsed === null ? null : ids(parsed)
  }

const KINDS = [
  { kind: 'order', name: orderStreamName, parse: pairOf(parseOrderStreamName, (p) => [p.merchantId, p.merchantOrderId]) },
  { kind: 'refund', name: refundStreamName, parse: pairOf(parseRefundStreamName, (p) => [p.merchantId, p.merchantRefundId]) },
  { kind: 'refundable', name: refundableStreamName, parse: pairOf(parseRefundableStreamName, (p) => [p.merchantId, p.merchantOrderId]) },
  { kind: 'subscription', name: subscriptionStreamName, parse: pairOf(parseSubscriptionStreamName, (p) => [p.merchantId, p.merchantSubscribeId]) },
] as const

const merchantIds = fc.stringMatching(/^14\d{16,18}$/)
const LINE_BREAKS = ['\n', '\r', '\r\n', '\u2028', '\u2029']

describe('stream names', () => {
  it.each(KINDS)('$kind: an id with a line break reads back whole', ({ name, parse }) => {
    for (const br of LINE_BREAKS) {
      const id = `A${br}B-1${br}`
      expect(parse(name('140000000000000001', id)), JSON.stringify(id)).toEqual(['140000000000000001', id])
    }
  })

  it.each(KINDS)('$kind: property: any merchant id and any non-empty id read back into themselves', ({ name, parse }) => {
    fc.assert(
      fc.property(merchantIds, fc.string({ unit: 'grapheme', minLength: 1 }), (merchantId, id) => {
        expect(parse(name(merchantId, id))).toEqual([merchantId, id])
      }),
    )
  })
})
