import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { ledgerPeriodClosed } from '../../../src/domain/ledger/events/ledger-period-closed.ts'
import { decideClose, evolvePeriods, initialPeriodsState, isLedgerPeriodEvent, ledgerPeriodsStreamName, nextDate, type ClosePeriod, type LedgerPeriodEvent, type PeriodsState } from '../../../src/domain/ledger/period.ts'
import { adjustmentLines, debitCredit, POSTING_RULES_V1, ruleBookOf, type PostingFact, type PostingRules } from '../../../src/domain/ledger/rules.ts'
import { isBalanced } from '../../../src/domain/ledger/postings.ts'

const close = (date: string, over: Partial<ClosePeriod> = {}): ClosePeriod => ({
  type: 'ClosePeriod',
  merchantId: '140000000000000001',
  date,
  ruleVersion: 1,
  closedBy: 'finance',
  reason: null,
  // 2026-01-10 12:00 in Bangkok
  at: new Date('2026-01-10T05:00:00.000Z'),
  ...over,
})

const after = (...dates: ReadonlyArray<string>): PeriodsState =>
  dates.reduce((s, d) => {
    const r = decideClose(close(d), s)
    if (E.isLeft(r)) throw new Error(`refused ${d}`)
    return r.right.reduce(evolvePeriods, s)
  }, initialPeriodsState)

describe('closing periods (given closes, when a close, then an event or a rejection)', () => {
  it('the first close covers every day up to its date; the next starts the day after the last', () => {
    expect(decideClose(close('2026-01-03'), initialPeriodsState)).toMatchObject({ _tag: 'Right', right: [{ type: 'LedgerPeriodClosed', data: { fromDate: null, throughDate: '2026-01-03', ruleVersion: 1 } }] })
    expect(decideClose(close('2026-01-05'), after('2026-01-03'))).toMatchObject({ _tag: 'Right', right: [{ data: { fromDate: '2026-01-04', throughDate: '2026-01-05' } }] })
    expect(decideClose(close('2026-03-01', { at: new Date('2026-03-02T00:00:00Z') }), { closedThrough: '2026-02-28', ruleVersion: 1 })).toMatchObject({ _tag: 'Right', right: [{ data: { fromDate: '2026-03-01' } }] })
  })
  it('a closed day never closes again (periods never reopen)', () => {
    expect(decideClose(close('2026-01-03'), after('2026-01-03'))).toEqual(E.left({ _tag: 'PeriodAlreadyClosed', date: '2026-01-03', closedThrough: '2026-01-03' }))
    expect(decideClose(close('2026-01-02'), after('2026-01-03'))).toMatchObject({ _tag: 'Left', left: { _tag: 'PeriodAlreadyClosed' } })
  })
  it('a day closes only once it is over in Asia/Bangkok', () => {
    // 2026-01-10 ends at 2026-01-10T17:00Z.
    expect(decideClose(close('2026-01-10', { at: new Date('2026-01-10T16:59:59.999Z') }), initialPeriodsState)).toEqual(
      E.left({ _tag: 'PeriodNotOver', date: '2026-01-10', endsAt: new Date('2026-01-10T17:00:00.000Z') }),
    )
    expect(E.isRight(decideClose(close('2026-01-10', { at: new Date('2026-01-10T17:00:00.000Z') }), initialPeriodsState))).toBe(true)
  })
  it('rule versions never go back', () => {
    const s = { closedThrough: '2026-01-03', ruleVersion: 2 }
    expect(decideClose(close('2026-01-04', { ruleVersion: 1 }), s)).toEqual(E.left({ _tag: 'RuleVersionBehind', ruleVersion: 1, lastClosedWith: 2 }))
  })
  it('bad input names every rule it breaks', () => {
    expect(decideClose(close('2026-02-30', { closedBy: ' ', reason: 'x'.repeat(1001) }), initialPeriodsState)).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'InvalidClose', violations: [{ path: 'date' }, { path: 'closed_by', rule: 'must name who closes the period' }, { path: 'reason', rule: 'must be at most 1000 characters' }] },
    })
  })
  it('who closes and why keep the text rules of every text (no NUL, other controls or lone surrogates)', () => {
    for (const c of ['\u0000', '\u0001', '\u001b', '\u009b', '\ud800']) {
      const r = decideClose(close('2026-01-03', { closedBy: `finance${c}`, reason: `signed off${c}` }), initialPeriodsState)
      expect(r, JSON.stringify(c)).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidClose', violations: [{ path: 'closed_by' }, { path: 'reason' }] } })
    }
    expect(E.isRight(decideClose(close('2026-01-03', { closedBy: 'การเงิน', reason: 'line one\nline two\tend' }), initialPeriodsState))).toBe(true)
  })
})

const fact = (kind: PostingFact['kind'], amount: bigint): PostingFact => ({
  kind,
  eventId: 'e',
  streamName: 's',
  merchantId: 'm',
  merchantOrderId: 'o',
  merchantRefundId: null,
  merchantSubscribeId: null,
  postedAt: new Date(0),
  description: 'd',
  amount,
  channel: 'svc.thaiqr.pay',
  currency: 'THB',
})

const V2: PostingRules = { version: 2, summary: 'x', linesOf: (f) => (f.kind === 'refund_succeeded' ? debitCredit('sales', 'gateway_receivable', f.channel, f.currency, f.amount) : POSTING_RULES_V1.linesOf(f)) }

describe('posting rule versions', () => {
  it('an adjustment is the balanced difference between two versions, numbered from 100 × the target version', () => {
    const lines = adjustmentLines(fact('refund_succeeded', 4000n), POSTING_RULES_V1, V2)
    expect(lines).toEqual([
      { line: 201, account: 'refunds', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 0n, credit: 4000n },
      { line: 202, account: 'sales', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 4000n, credit: 0n },
    ])
    expect(isBalanced({ lines })).toBe(true)
    expect(adjustmentLines(fact('order_paid', 4000n), POSTING_RULES_V1, V2)).toEqual([])
  })
  it('a rule book holds versions 1..n, the newest current', () => {
    expect(ruleBookOf(POSTING_RULES_V1, V2).current.version).toBe(2)
    expect(() => ruleBookOf(V2)).toThrow(/version 1 is missing/)
    expect(() => ruleBookOf(POSTING_RULES_V1, POSTING_RULES_V1)).toThrow(/each once/)
  })
})

describe('closing periods: each rule at its edge, the event whole', () => {
  it('the event: who closed (trimmed), why (trimmed, or null when blank), through which day, at which version', () => {
    const r = decideClose(close('2026-01-03', { closedBy: '  finance  ', reason: '  month end  ', ruleVersion: 3 }), { closedThrough: '2026-01-01', ruleVersion: 2 })
    expect(r).toEqual(
      E.right([
        ledgerPeriodClosed.make({ merchantId: '140000000000000001', fromDate: '2026-01-02', throughDate: '2026-01-03', ruleVersion: 3, closedBy: 'finance', reason: 'month end', closedAt: new Date('2026-01-10T05:00:00.000Z') }),
      ]),
    )
    expect(decideClose(close('2026-01-03', { reason: '   ' }), initialPeriodsState)).toMatchObject({ right: [{ data: { reason: null } }] })
    expect(decideClose(close('2026-01-03', { reason: null }), initialPeriodsState)).toMatchObject({ right: [{ data: { reason: null } }] })
  })
  it('the longest texts allowed, and one character more', () => {
    expect(E.isRight(decideClose(close('2026-01-03', { closedBy: 'x'.repeat(200), reason: 'y'.repeat(1000) }), initialPeriodsState))).toBe(true)
    expect(decideClose(close('2026-01-03', { closedBy: 'x'.repeat(201) }), initialPeriodsState)).toEqual(E.left({ _tag: 'InvalidClose', violations: [{ path: 'closed_by', rule: 'must be at most 200 characters' }] }))
  })
  it('a reason alone can break a text rule', () => {
    expect(decideClose(close('2026-01-03', { reason: 'bad\u0000' }), initialPeriodsState)).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidClose', violations: [{ path: 'reason' }] } })
  })
  it('a later day is not already closed; the same rule version is not behind', () => {
    const s = { closedThrough: '2026-01-03', ruleVersion: 2 }
    expect(decideClose(close('2026-01-04', { ruleVersion: 2 }), s)).toMatchObject({ _tag: 'Right' })
    expect(decideClose(close('2026-01-04', { ruleVersion: 1 }), { closedThrough: null, ruleVersion: null })).toMatchObject({ _tag: 'Right' })
  })
  it('nextDate: the day after; not a date is an error', () => {
    expect(nextDate('2026-12-31')).toBe('2027-01-01')
    expect(() => nextDate('2026-02-30')).toThrow('not a date: 2026-02-30')
  })
  it('the stream and the events of periods', () => {
    expect(ledgerPeriodsStreamName('M1')).toBe('ledger-periods-M1')
    const decided = decideClose(close('2026-01-03'), initialPeriodsState)
    const [e]: ReadonlyArray<LedgerPeriodEvent> = E.isRight(decided) ? decided.right : []
    expect(e !== undefined && isLedgerPeriodEvent(e)).toBe(true)
    expect(isLedgerPeriodEvent({ type: 'SomethingElse' })).toBe(false)
  })
})

describe('rule books and adjustments at their edges', () => {
  const version = (v: number): PostingRules => ({ ...POSTING_RULES_V1, version: v })
  it('versions must be whole numbers 1..n, each once, at most 300', () => {
    for (const bad of [[], [version(0)], [version(1.5)], [version(-1), version(1)], [version(1), version(Number.NaN)]]) {
      expect(() => ruleBookOf(...bad)).toThrow('a rule book holds versions 1..n, each once')
    }
    expect(() => ruleBookOf(version(1), version(3))).toThrow('a rule book holds versions 1..n: version 2 is missing')
    const many = Array.from({ length: 300 }, (_, i) => version(i + 1))
    expect(ruleBookOf(...many).current.version).toBe(300)
    expect(() => ruleBookOf(...many, version(301))).toThrow('rule versions above 300 do not fit the adjustment line numbers')
    expect(ruleBookOf(version(2), version(1)).versions.size).toBe(2)
  })
  it('an adjustment nets credits against debits, each account on the side its difference falls on', () => {
    // V3 books a refund on the credit side of refunds and the debit side of gateway_receivable: the reverse of V1.
    const V3: PostingRules = { version: 3, summary: 'x', linesOf: (f) => debitCredit('gateway_receivable', 'refunds', f.channel, f.currency, f.amount) }
    expect(adjustmentLines(fact('refund_succeeded', 100n), POSTING_RULES_V1, V3)).toEqual([
      { line: 301, account: 'refunds', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 0n, credit: 200n },
      { line: 302, account: 'gateway_receivable', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 200n, credit: 0n },
    ])
  })
})
