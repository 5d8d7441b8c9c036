import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { eventDefinitions, type DomainEvent } from '../../../src/domain/events/registry.ts'
import {
  foldLedger,
  imbalances,
  isBalanced,
  LEDGER_STREAM_PREFIXES,
  orderStreamNeeded,
  SUBSCRIPTION_CHANNEL,
  UNKNOWN_CHANNEL,
  type LedgerInput,
  type OrderTrack,
  type Posting,
  type PostingLine,
} from '../../../src/domain/ledger/index.ts'
import { fold, isOrderEvent, isPaid, paidAmountOf, type OrderEvent } from '../../../src/domain/order/index.ts'
import { decodeOrderState, encodeOrderState } from '../../../src/projections/orders/state.ts'
import { at, MERCHANT_ID } from '../support/values.ts'
import { accepted, charged, observed, orderCreated, orderStream, paymentRequested, redirect, refundRecorded, refundStream, subscriptionStream } from './builders.ts'

let seq = 0
const input = (streamName: string, event: DomainEvent): LedgerInput => {
  seq += 1
  return { eventId: `ev-${String(seq)}`, streamName, event }
}
const order = (id: string, ...events: DomainEvent[]): LedgerInput[] => events.map((e) => input(orderStream(id), e))

const linesOf = (postings: ReadonlyArray<Posting>): ReadonlyArray<PostingLine> => postings.flatMap((p) => p.lines)
const balanceOf = (postings: ReadonlyArray<Posting>, account: string): bigint =>
  linesOf(postings)
    .filter((l) => l.account === account)
    .reduce((s, l) => s + l.debit - l.credit, 0n)

describe('an order becoming paid', () => {
  it('posts Dr gateway_receivable / Cr sales once, on the order channel, from the event that paid it', () => {
    const events = order(
      'A',
      orderCreated('A', { amount: 25000n, service: 'svc.wallet_b.pay' }),
      paymentRequested(),
      accepted('A', { amount: 25000n }),
      observed('A', 'PS', { amount: 25000n }),
      observed('A', 'PS', { source: 'query', amount: 25000n, observedAt: at(9) }),
      observed('A', 'PS', { amount: 25000n, nonce: '-again' }),
      observed('A', 'WP', { source: 'query', amount: 25000n, observedAt: at(12) }),
    )
    const { postings } = foldLedger(events)
    expect(postings).toHaveLength(1)
    const [p] = postings
    expect(p).toMatchObject({ kind: 'order_paid', eventId: events[3]?.eventId, streamName: orderStream('A'), merchantId: MERCHANT_ID, merchantOrderId: 'A', merchantRefundId: null })
    expect(p?.lines).toEqual([
      { line: 1, account: 'gateway_receivable', channel: 'svc.wallet_b.pay', currency: 'THB', debit: 25000n, credit: 0n },
      { line: 2, account: 'sales', channel: 'svc.wallet_b.pay', currency: 'THB', debit: 0n, credit: 25000n },
    ])
    expect(p?.postedAt).toEqual(at(5))
    expect(p !== undefined && isBalanced(p)).toBe(true)
  })

  it('is dated by the gateway complete time when the observation carries one', () => {
    const completeTime = new Date('2026-01-01T16:59:59.000Z')
    const { postings } = foldLedger(order('A', orderCreated('A'), observed('A', 'PS', { source: 'query', observedAt: at(24 * 60), completeTime })))
    expect(postings[0]?.postedAt).toEqual(completeTime)
  })

  it('posts at a create answer that already carries a final succeeded status, with the time it was received', () => {
    const events = order('A', orderCreated('A'), paymentRequested(), accepted('A', { status: 'PS', receivedAt: at(2) }), observed('A', 'PS'))
    const { postings } = foldLedger(events)
    expect(postings.map((p) => p.eventId)).toEqual([events[2]?.eventId])
    expect(postings[0]?.postedAt).toEqual(at(2))
  })

  it('does not post an answer whose amount disagrees with the order (the aggregate ignores its status)', () => {
    const { postings } = foldLedger(order('A', orderCreated('A'), paymentRequested(), accepted('A', { status: 'PS', amount: 9000n })))
    expect(postings).toEqual([])
  })

  it('never posts a failed final status, nor a success observed after it (a final status never regresses)', () => {
    const { postings } = foldLedger(order('A', orderCreated('A'), observed('A', 'PF'), observed('A', 'PS', { source: 'query' })))
    expect(postings).toEqual([])
  })

  it('never posts on a redirect, pending or unknown status alone', () => {
    const { postings } = foldLedger(order('A', orderCreated('A'), redirect('A', 'PS'), observed('A', 'WP'), observed('A', 'ZZ')))
    expect(postings).toEqual([])
  })

  it('posts nothing for observations of an order never created, and nothing twice for an order already paid', () => {
    expect(foldLedger(order('X', observed('X', 'PS'))).postings).toEqual([])
    const paid: OrderTrack = { _tag: 'Paid', merchantId: MERCHANT_ID, merchantOrderId: 'A', channel: 'svc.thaiqr.pay', currency: 'THB' }
    const again = foldLedger(order('A', observed('A', 'PS', { source: 'query' })), new Map([[orderStream('A'), paid]]))
    expect(again.postings).toEqual([])
    expect(again.changed.size).toBe(0)
  })

  it('ignores events of the shared types met in a refund or subscription stream', () => {
    const { postings, orders } = foldLedger([input(refundStream('R'), orderCreated('R')), input(subscriptionStream('S'), observed('S', 'PS'))])
    expect(postings).toEqual([])
    expect(orders.size).toBe(0)
  })
})

describe('refunds and subscription charges', () => {
  it('a recorded refund posts Dr refunds / Cr gateway_receivable on the refunded order channel', () => {
    const events = [
      ...order('A', orderCreated('A', { service: 'svc.mobile.banking.pay' }), observed('A', 'PS')),
      input(refundStream('R1'), refundRecorded('R1', 'A', 4000n, { completeTime: at(40) })),
    ]
    const { postings } = foldLedger(events)
    expect(postings).toHaveLength(2)
    expect(postings[1]).toMatchObject({ kind: 'refund_succeeded', merchantOrderId: 'A', merchantRefundId: 'R1', postedAt: at(40) })
    expect(postings[1]?.lines).toEqual([
      { line: 1, account: 'refunds', channel: 'svc.mobile.banking.pay', currency: 'THB', debit: 4000n, credit: 0n },
      { line: 2, account: 'gateway_receivable', channel: 'svc.mobile.banking.pay', currency: 'THB', debit: 0n, credit: 4000n },
    ])
    expect(balanceOf(postings, 'gateway_receivable')).toBe(6000n)
  })

  it('the refund of an order never seen goes to the channel unknown', () => {
    const { postings } = foldLedger([input(refundStream('R1'), refundRecorded('R1', 'NOPE', 100n))])
    expect(postings[0]?.lines.map((l) => l.channel)).toEqual([UNKNOWN_CHANNEL, UNKNOWN_CHANNEL])
  })

  it('a subscription charge posts Dr gateway_receivable / Cr subscription_sales on the channel subscription', () => {
    const { postings } = foldLedger([input(subscriptionStream('SUB-1'), charged('2026-01-05', 19900n))])
    expect(postings[0]).toMatchObject({ kind: 'subscription_charged', merchantId: MERCHANT_ID, merchantSubscribeId: 'SUB-1', merchantOrderId: null, postedAt: at(60) })
    expect(postings[0]?.lines).toEqual([
      { line: 1, account: 'gateway_receivable', channel: SUBSCRIPTION_CHANNEL, currency: 'THB', debit: 19900n, credit: 0n },
      { line: 2, account: 'subscription_sales', channel: SUBSCRIPTION_CHANNEL, currency: 'THB', debit: 0n, credit: 19900n },
    ])
  })
})

describe('balance checks', () => {
  it('isBalanced refuses unequal sides, two-sided or negative lines, and an empty posting', () => {
    const line = (o: Partial<PostingLine>): PostingLine => ({ line: 1, account: 'sales', channel: 'c', currency: 'THB', debit: 0n, credit: 0n, ...o })
    expect(isBalanced({ lines: [line({ debit: 5n }), line({ credit: 5n })] })).toBe(true)
    expect(isBalanced({ lines: [line({ debit: 5n }), line({ credit: 4n })] })).toBe(false)
    expect(isBalanced({ lines: [line({ debit: 5n, currency: 'USD' }), line({ credit: 5n })] })).toBe(false)
    expect(isBalanced({ lines: [line({ debit: 5n, credit: 5n })] })).toBe(false)
    expect(isBalanced({ lines: [line({ debit: -5n }), line({ credit: -5n })] })).toBe(false)
    expect(isBalanced({ lines: [] })).toBe(false)
    expect(imbalances([line({ debit: 5n, currency: 'USD' }), line({ credit: 5n })])).toEqual([
      { currency: 'USD', debit: 5n, credit: 0n },
      { currency: 'THB', debit: 0n, credit: 5n },
    ])
  })
})

/*
 * Property: random logs of many orders (duplicates, out-of-order and late observations, redirects,
 * unknown and failed statuses, disagreeing amounts), refunds and subscription charges, applied in
 * random batches with the order states kept between batches as JSON (as the projection keeps them).
 */

type Script = { readonly streams: ReadonlyArray<ReadonlyArray<{ readonly key: number; readonly input: LedgerInput }>> }

const ORDER_IDS = ['O1', 'O2', 'O3', 'O4']
const observation = (id: string, amount: bigint) =>
  fc
    .record({
      kind: fc.constantFrom('notification', 'query', 'redirect', 'accepted'),
      status: fc.constantFrom('WP', 'PI', 'PS', 'PS', 'PF', 'ZZ'),
      wrongAmount: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      nonce: fc.integer({ min: 0, max: 3 }),
    })
    .map(({ kind, status, wrongAmount, nonce }): DomainEvent => {
      const a = wrongAmount ? amount + 1n : amount
      if (kind === 'redirect') return redirect(id, status)
      if (kind === 'accepted') return accepted(id, { status, amount: a })
      return observed(id, status, { source: kind, amount: a, nonce: String(nonce) })
    })

const orderScript = (id: string) =>
  fc
    .record({ amount: fc.bigInt({ min: 1n, max: 99_999_998n }), service: fc.constantFrom('svc.thaiqr.pay', 'svc.wallet_a.pay', 'svc.checkout.apply'), created: fc.integer({ min: 0, max: 7 }).map((n) => n !== 0) })
    .chain(({ amount, service, created }) =>
      fc.array(observation(id, amount), { maxLength: 8 }).map((obs) => ({ id, amount, events: [...(created ? [orderCreated(id, { amount, service })] : []), ...obs] })),
    )

const script = fc
  .record({
    orders: fc.tuple(...ORDER_IDS.map(orderScript)),
    refunds: fc.array(fc.record({ order: fc.constantFrom(...ORDER_IDS, 'GONE'), amount: fc.bigInt({ min: 1n, max: 5000n }) }), { maxLength: 4 }),
    charges: fc.array(fc.bigInt({ min: 1n, max: 100_000n }), { maxLength: 3 }),
  })
  .chain(({ orders, refunds, charges }) => {
    const seqs: LedgerInput[][] = [
      ...orders.map((o) => o.events.map((e) => input(orderStream(o.id), e))),
      ...refunds.map((r, i) => [input(refundStream(`R${String(i)}`), refundRecorded(`R${String(i)}`, r.order, r.amount))]),
      [...charges.map((amount, i) => input(subscriptionStream('SUB-1'), charged(`2026-01-${String(i + 10)}`, amount)))],
    ]
    // Random keys, sorted within a stream: merging by key interleaves the streams and keeps each stream's order.
    return fc.tuple(...seqs.map((s) => fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: s.length, maxLength: s.length }))).map(
      (keys): Script => ({ streams: seqs.map((s, i) => s.map((inp, j) => ({ key: [...(keys[i] ?? [])].sort((a, b) => a - b)[j] ?? 0, input: inp }))) }),
    )
  })

const logOf = (s: Script): ReadonlyArray<LedgerInput> =>
  s.streams
    .flat()
    .map((x, i) => ({ ...x, i }))
    .sort((a, b) => a.key - b.key || a.i - b.i)
    .map((x) => x.input)

/** The projection in memory: tracks kept between batches as JSON text, as in `ledger_order_states`. */
const foldInBatches = (log: ReadonlyArray<LedgerInput>, cuts: ReadonlyArray<number>): ReadonlyArray<Posting> => {
  const kept = new Map<string, string>()
  const postings: Posting[] = []
  const bounds = [...new Set([0, ...cuts.map((c) => c % (log.length + 1)), log.length])].sort((a, b) => a - b)
  for (let b = 0; b + 1 < bounds.length; b++) {
    const batch = log.slice(bounds[b], bounds[b + 1])
    const loaded = new Map<string, OrderTrack>()
    for (const [stream, text] of kept) {
      const row = JSON.parse(text) as { paid: OrderTrack | null; state: unknown }
      if (row.paid !== null) loaded.set(stream, row.paid)
      else {
        const state = decodeOrderState(row.state)
        if (state._tag === 'Order') loaded.set(stream, { _tag: 'Open', state })
      }
    }
    const folded = foldLedger(batch, loaded)
    for (const stream of folded.changed) {
      const t = folded.orders.get(stream)
      if (t !== undefined) kept.set(stream, JSON.stringify(t._tag === 'Paid' ? { paid: t, state: null } : { paid: null, state: encodeOrderState(t.state) }))
    }
    postings.push(...folded.postings)
  }
  return postings
}

describe('the ledger over random logs (property)', () => {
  it('every posting is balanced; an order posts once iff the aggregate says paid; receivable = paid - refunded + charged; batches change nothing', () => {
    fc.assert(
      fc.property(script, fc.array(fc.nat(), { maxLength: 6 }), (s, cuts) => {
        const log = logOf(s)
        const whole = foldLedger(log).postings
        for (const p of whole) expect(isBalanced(p)).toBe(true)
        expect(imbalances(linesOf(whole))).toEqual([])

        let paid = 0n
        for (const id of ORDER_IDS) {
          const events = log.filter((i) => i.streamName === orderStream(id)).map((i) => i.event).filter((e): e is OrderEvent => isOrderEvent(e))
          const state = fold(events)
          const posted = whole.filter((p) => p.kind === 'order_paid' && p.merchantOrderId === id)
          expect(posted).toHaveLength(isPaid(state) ? 1 : 0)
          if (isPaid(state)) expect(posted[0]?.lines[0]?.debit).toBe(paidAmountOf(state))
          paid += paidAmountOf(state) ?? 0n
        }
        const refunded = log.reduce((sum, i) => sum + (i.event.type === 'RefundRecorded' ? i.event.data.amount : 0n), 0n)
        const chargedTotal = log.reduce((sum, i) => sum + (i.event.type === 'SubscriptionCharged' ? i.event.data.amount : 0n), 0n)
        expect(balanceOf(whole, 'gateway_receivable')).toBe(paid - refunded + chargedTotal)
        expect(balanceOf(whole, 'sales')).toBe(-paid)
        expect(balanceOf(whole, 'refunds')).toBe(refunded)
        expect(balanceOf(whole, 'subscription_sales')).toBe(-chargedTotal)

        expect(foldInBatches(log, cuts)).toEqual(whole)
      }),
      { numRuns: 300 },
    )
  })
})

describe('the posting facts in full, and their edges', () => {
  it('an order paid: the whole fact, its description naming the amount, currency, channel and status', () => {
    const events = order('A', orderCreated('A', { amount: 25050n, service: 'svc.wallet_b.pay' }), observed('A', 'PS', { amount: 25050n, source: 'query', observedAt: at(7) }))
    const { facts } = foldLedger(events)
    expect(facts).toEqual([
      {
        kind: 'order_paid',
        eventId: events[1]?.eventId,
        streamName: orderStream('A'),
        merchantId: MERCHANT_ID,
        merchantOrderId: 'A',
        merchantRefundId: null,
        merchantSubscribeId: null,
        postedAt: at(7),
        description: 'order A paid 250.50 THB via svc.wallet_b.pay (status PS by query)',
        amount: 25050n,
        channel: 'svc.wallet_b.pay',
        currency: 'THB',
      },
    ])
  })

  it('a refund succeeded: the whole fact, dated by the observation when the gateway gave no complete time', () => {
    const events = [...order('A', orderCreated('A', { service: 'svc.thaiqr.pay' })), input(refundStream('R1'), refundRecorded('R1', 'A', 4000n, { observedAt: at(33) }))]
    const { facts } = foldLedger(events)
    expect(facts).toEqual([
      {
        kind: 'refund_succeeded',
        eventId: events[1]?.eventId,
        streamName: refundStream('R1'),
        merchantId: MERCHANT_ID,
        merchantOrderId: 'A',
        merchantRefundId: 'R1',
        merchantSubscribeId: null,
        postedAt: at(33),
        description: 'refund R1 of order A succeeded: 40.00 THB back to the payer (by notification)',
        amount: 4000n,
        channel: 'svc.thaiqr.pay',
        currency: 'THB',
      },
    ])
  })

  it('a refund of a paid order goes to the channel the order was paid on', () => {
    const events = [...order('A', orderCreated('A', { service: 'svc.wallet_a.pay' }), observed('A', 'PS')), input(refundStream('R1'), refundRecorded('R1', 'A', 100n))]
    expect(foldLedger(events).facts.map((f) => f.channel)).toEqual(['svc.wallet_a.pay', 'svc.wallet_a.pay'])
  })

  it('a subscription charge: the whole fact; a stream name that is not a subscription stream keeps its name as the id', () => {
    const ev = input(subscriptionStream('SUB-1'), charged('2026-01-05', 19900n))
    expect(foldLedger([ev]).facts).toEqual([
      {
        kind: 'subscription_charged',
        eventId: ev.eventId,
        streamName: subscriptionStream('SUB-1'),
        merchantId: MERCHANT_ID,
        merchantOrderId: null,
        merchantRefundId: null,
        merchantSubscribeId: 'SUB-1',
        postedAt: at(60),
        description: 'subscription SUB-1 charged 199.00 THB for 2026-01-05 (recurring bill RB-1)',
        amount: 19900n,
        channel: SUBSCRIPTION_CHANNEL,
        currency: 'THB',
      },
    ])
    const odd = input('subscription-', charged('2026-01-06', 100n))
    expect(foldLedger([odd]).facts).toMatchObject([{ merchantId: 'unknown', merchantSubscribeId: 'subscription-' }])
  })

  it('zero amounts post nothing: an order of 0.00 paid, a refund of 0.00, a charge of 0.00', () => {
    const paid = foldLedger(order('Z', orderCreated('Z', { amount: 0n }), observed('Z', 'PS', { amount: 0n })))
    expect(paid.postings).toEqual([])
    // The order is still paid: nothing it receives later posts.
    expect(paid.orders.get(orderStream('Z'))).toEqual({ _tag: 'Paid', merchantId: MERCHANT_ID, merchantOrderId: 'Z', channel: 'svc.thaiqr.pay', currency: 'THB' })
    expect(foldLedger([input(refundStream('R0'), refundRecorded('R0', 'Z', 0n))]).postings).toEqual([])
    expect(foldLedger([input(subscriptionStream('SUB-1'), charged('2026-01-05', 0n))]).postings).toEqual([])
    // One satang does post.
    expect(foldLedger([input(refundStream('R1'), refundRecorded('R1', 'Z', 1n))]).postings).toHaveLength(1)
    expect(foldLedger([input(subscriptionStream('SUB-1'), charged('2026-01-05', 1n))]).postings).toHaveLength(1)
    expect(foldLedger(order('O', orderCreated('O', { amount: 1n }), observed('O', 'PS', { amount: 1n }))).postings).toHaveLength(1)
  })

  it('an event that changes nothing of an open order keeps its track and does not mark it changed', () => {
    const first = foldLedger(order('A', orderCreated('A'), observed('A', 'WP')))
    const track = first.orders.get(orderStream('A'))
    expect(track?._tag).toBe('Open')
    // OrderCreated again leaves the aggregate state as it is.
    const unchanged = foldLedger(order('A', orderCreated('A')), first.orders)
    expect(unchanged.changed.size).toBe(0)
    expect(unchanged.orders.get(orderStream('A'))).toBe(track)
    expect(unchanged.postings).toEqual([])
    const notAnOrderEvent = foldLedger([input(orderStream('A'), charged('2026-01-05', 100n))], first.orders)
    expect(notAnOrderEvent.changed.size).toBe(0)
    // An observation of an order never created leaves no track.
    const never = foldLedger(order('X', observed('X', 'PS')))
    expect([never.changed.size, never.orders.size]).toEqual([0, 0])
  })

  it('the order stream an input needs: its own for an order event, the refunded order for a refund, none otherwise', () => {
    expect(orderStreamNeeded(input(orderStream('A'), observed('A', 'PS')))).toBe(orderStream('A'))
    expect(orderStreamNeeded(input(orderStream('A'), charged('2026-01-05', 1n)))).toBeNull()
    expect(orderStreamNeeded(input(refundStream('R1'), refundRecorded('R1', 'A', 1n)))).toBe(orderStream('A'))
    expect(orderStreamNeeded(input(subscriptionStream('S'), refundRecorded('R1', 'A', 1n)))).toBeNull()
    expect(orderStreamNeeded(input(subscriptionStream('S'), charged('2026-01-05', 1n)))).toBeNull()
    // Other events of a refund stream name the order too, but need no track.
    const tracked = eventDefinitions.RefundTracked.make({ merchantId: MERCHANT_ID, merchantRefundId: 'R1', merchantOrderId: 'A', trackedBy: 'merchant', trackedAt: at(1) })
    expect(orderStreamNeeded(input(refundStream('R1'), tracked))).toBeNull()
    expect(LEDGER_STREAM_PREFIXES).toEqual(['order-', 'refund-', 'subscription-'])
  })

  it('a refund or charge met in another kind of stream posts nothing', () => {
    expect(
      foldLedger([input(orderStream('A'), refundRecorded('R1', 'A', 100n)), input(subscriptionStream('S'), refundRecorded('R1', 'A', 100n)), input(refundStream('R2'), charged('2026-01-05', 100n))]).postings,
    ).toEqual([])
  })
})

describe('isBalanced: one bad line among good ones', () => {
  const line = (o: Partial<PostingLine>): PostingLine => ({ line: 1, account: 'sales', channel: 'c', currency: 'THB', debit: 0n, credit: 0n, ...o })
  const good = [line({ debit: 5n }), line({ credit: 5n })]
  it.each([
    ['a two-sided line', line({ debit: 3n, credit: 3n })],
    ['an empty line', line({})],
    ['a negative debit beside a debit that offsets it', line({ debit: -2n })],
    ['a negative credit beside a credit that offsets it', line({ credit: -2n })],
  ])('%s makes a posting unbalanced', (_, bad) => {
    const offset = bad.debit < 0n ? [line({ debit: 2n })] : bad.credit < 0n ? [line({ credit: 2n })] : []
    const lines = [...good, ...offset, bad]
    expect(imbalances(lines)).toEqual([])
    expect(isBalanced({ lines })).toBe(false)
    expect(isBalanced({ lines: [...good, ...offset] })).toBe(offset.length === 0)
  })
  it('several good lines in two currencies are balanced', () => {
    expect(isBalanced({ lines: [...good, line({ currency: 'USD', debit: 7n }), line({ currency: 'USD', credit: 3n }), line({ currency: 'USD', credit: 4n })] })).toBe(true)
  })
})
