import * as E from 'fp-ts/lib/Either.js'
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseJournal, replay, type JournalEntry } from '../../src/sandbox/journal.ts'
import type { SandboxOrder, SandboxSnapshot } from '../../src/sandbox/state.ts'

/** The state journal: reading its lines (a torn last one is dropped, damage is refused) and replaying them onto a snapshot. */

const anOrder = (orderId: string, over: Partial<SandboxOrder> = {}): SandboxOrder => ({
  kind: 'direct',
  merchantId: '140000000000000001',
  merchantOrderId: `M-${orderId}`,
  orderId,
  status: 'WP',
  amount: '10.00',
  requestedAmount: '10.00',
  currency: 'THB',
  description: 'tea',
  createTime: '2030-01-01 10:00:00',
  createdAtMs: 1_893_466_800_000,
  ...over,
})

const aSnapshot = (over: Partial<SandboxSnapshot> = {}): SandboxSnapshot => ({
  format: 'satang-sandbox-state-v1',
  clock: '2030-01-01T03:00:00.000Z',
  sequence: 0,
  commit: 0,
  orders: [],
  refunds: [],
  subscriptions: [],
  ...over,
})

const anEntry = (commit: number, over: Partial<JournalEntry> = {}): JournalEntry => ({ commit, clock: '2030-01-01T03:00:00.000Z', sequence: commit, ...over })

const lineOf = (e: JournalEntry): string => `${JSON.stringify(e)}\n`

describe('parseJournal', () => {
  it('reads every complete line, in order', () => {
    const text = [anEntry(1, { orders: [anOrder('1')] }), anEntry(2)].map(lineOf).join('')
    expect(parseJournal(text)).toEqual(E.right({ entries: [anEntry(1, { orders: [anOrder('1')] }), anEntry(2)], tornTail: false }))
    expect(parseJournal('')).toEqual(E.right({ entries: [], tornTail: false }))
  })

  it('drops a last line cut short at any byte, or zero-filled, and keeps the lines before it', () => {
    const good = lineOf(anEntry(1, { orders: [anOrder('1')] }))
    const last = lineOf(anEntry(2, { orders: [anOrder('2')] }))
    fc.assert(
      fc.property(fc.integer({ min: 1, max: last.length - 2 }), (cut) => {
        expect(parseJournal(good + last.slice(0, cut))).toEqual(E.right({ entries: [anEntry(1, { orders: [anOrder('1')] })], tornTail: true }))
      }),
    )
    expect(parseJournal(`${good}${'\u0000'.repeat(40)}`)).toEqual(E.right({ entries: [anEntry(1, { orders: [anOrder('1')] })], tornTail: true }))
  })

  it('refuses an unusable line that has good lines after it, naming the line and the rule', () => {
    const text = `${lineOf(anEntry(1))}{"commit":2}\n${lineOf(anEntry(3))}`
    const parsed = parseJournal(text)
    expect(E.isLeft(parsed) && parsed.left).toMatch(/^line 2 of 3 is not a journal entry: .*clock/s)
    expect(parseJournal(`garbage\n${lineOf(anEntry(1))}`)).toEqual(E.left(expect.stringMatching(/^line 1 of 2 is not a journal entry: not JSON/)))
  })
})

describe('replay', () => {
  it('replaces records whole, in order, and moves the sequence, the clock and the commit on', () => {
    const base = aSnapshot({ sequence: 2, commit: 4, orders: [anOrder('1'), anOrder('2')] })
    const state = replay(base, [
      anEntry(5, { sequence: 3, orders: [anOrder('2', { status: 'PS' }), anOrder('3')] }),
      anEntry(6, { sequence: 3, clock: '2030-02-01T00:00:00.000Z', orders: [anOrder('3', { status: 'PF' })] }),
    ])
    expect(state).toEqual(
      aSnapshot({ sequence: 3, commit: 6, clock: '2030-02-01T00:00:00.000Z', orders: [anOrder('1'), anOrder('2', { status: 'PS' }), anOrder('3', { status: 'PF' })] }),
    )
  })

  it('skips entries the snapshot already holds (written before the journal was emptied)', () => {
    const base = aSnapshot({ sequence: 7, commit: 7, orders: [anOrder('1', { status: 'PS' })] })
    const state = replay(base, [anEntry(6, { sequence: 6, orders: [anOrder('1', { status: 'WP' })] }), anEntry(8, { sequence: 8 })])
    expect(state).toEqual(aSnapshot({ sequence: 8, commit: 8, orders: [anOrder('1', { status: 'PS' })] }))
  })

  it('never moves the sequence or the clock back', () => {
    const base = aSnapshot({ sequence: 9, clock: '2031-01-01T00:00:00.000Z' })
    expect(replay(base, [anEntry(1, { sequence: 3 })])).toMatchObject({ sequence: 9, clock: '2031-01-01T00:00:00.000Z', commit: 1 })
  })
})
