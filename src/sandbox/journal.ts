import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { decodeAll, formatViolations } from '../domain/violations.ts'
import { refundKeyOf, SandboxOrder, SandboxRefund, SandboxSubscription, type SandboxSnapshot } from './state.ts'

/*
 * The journal beside `--state FILE`: one JSON line per commit, appended and fsync'd before any answer
 * that depends on it leaves the sandbox. A line holds the records changed since the previous commit
 * (each whole) and the id sequence and sandbox time after it. Replaying the lines whose commit is after
 * the snapshot's, in order, gives the state.
 */

export const JournalEntry = t.intersection([
  t.type({
    commit: t.number,
    /** Sandbox time (ISO-8601) when written. */
    clock: t.string,
    sequence: t.number,
  }),
  t.partial({
    orders: t.array(SandboxOrder),
    refunds: t.array(SandboxRefund),
    subscriptions: t.array(SandboxSubscription),
  }),
])
export type JournalEntry = t.TypeOf<typeof JournalEntry>

/** The entries of a journal, and the last line when it was left incomplete by a crash (never answered). */
export type ParsedJournal = { readonly entries: ReadonlyArray<JournalEntry>; readonly tornTail: boolean }

const decodeLine = (line: string): E.Either<string, JournalEntry> => {
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch (e) {
    return E.left(`not JSON (${e instanceof Error ? e.message : 'parse error'})`)
  }
  return E.mapLeft(formatViolations)(decodeAll(JournalEntry, json))
}

/**
 * Reads a journal's text. Only the last line may be unusable: a crash during its write leaves it cut
 * short (or, after a power loss, filled with zeros), and it was never answered, so it is dropped. An
 * unusable line with good lines after it is damage, not a crash: `left` names the line.
 */
export const parseJournal = (text: string): E.Either<string, ParsedJournal> => {
  const lines = text.split('\n')
  // A journal that ends with its newline splits into a last empty string.
  if (lines.at(-1) === '') lines.pop()
  const entries: JournalEntry[] = []
  for (const [i, line] of lines.entries()) {
    const entry = decodeLine(line)
    if (E.isRight(entry)) entries.push(entry.right)
    else if (i === lines.length - 1) return E.right({ entries, tornTail: true })
    else return E.left(`line ${String(i + 1)} of ${String(lines.length)} is not a journal entry: ${entry.left}`)
  }
  return E.right({ entries, tornTail: false })
}

const later = (a: string, b: string): string => (Date.parse(b) > Date.parse(a) ? b : a)

/** The snapshot with the entries after its commit applied in order: records replaced whole, the sequence and clock moved on. */
export const replay = (snapshot: SandboxSnapshot, entries: ReadonlyArray<JournalEntry>): SandboxSnapshot => {
  const orders = new Map(snapshot.orders.map((o) => [o.orderId, o]))
  const refunds = new Map(snapshot.refunds.map((r) => [refundKeyOf(r), r]))
  const subscriptions = new Map(snapshot.subscriptions.map((s) => [s.recurringBillId, s]))
  let { clock, sequence } = snapshot
  let commit = snapshot.commit ?? 0
  for (const e of entries) {
    // Entries at or before the snapshot's commit are in it already: compaction wrote the snapshot, then emptied the journal.
    if (e.commit <= commit) continue
    e.orders?.forEach((o) => orders.set(o.orderId, o))
    e.refunds?.forEach((r) => refunds.set(refundKeyOf(r), r))
    e.subscriptions?.forEach((s) => subscriptions.set(s.recurringBillId, s))
    sequence = Math.max(sequence, e.sequence)
    clock = later(clock, e.clock)
    commit = e.commit
  }
  return { ...snapshot, clock, sequence, commit, orders: [...orders.values()], refunds: [...refunds.values()], subscriptions: [...subscriptions.values()] }
}
