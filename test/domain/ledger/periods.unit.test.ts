import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { decideClose, evolvePeriods, initialPeriodsState, type ClosePeriod, type PeriodsState } from '../../../src/domain/ledger/period.ts'
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
