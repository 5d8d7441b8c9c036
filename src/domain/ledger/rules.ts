import type { LedgerAccount } from './accounts.ts'

/*
 * Posting rules, versioned. What moved money is a fact the log decides (`PostingFact`: an order paid,
 * a refund succeeded, a subscription charged, with its amount, channel, currency and time); which
 * accounts it moves is a rule, and rules change. Each version of the rules stays here forever (as
 * old event codecs do): a period closed at version n is rebuilt with version n, byte for byte, and
 * only the open period follows the newest rules, adjusted for the closed facts whose rules changed.
 */

export type PostingKind = 'order_paid' | 'refund_succeeded' | 'subscription_charged'

/** One line of a posting: exactly one of `debit` / `credit` is non-zero; both are ≥ 0 satang. */
export type PostingLine = {
  /** With the event id, the line's identity: 1, 2, … for a posting; `100 × version + k` for an adjustment to `version`. */
  readonly line: number
  readonly account: LedgerAccount
  readonly channel: string
  readonly currency: string
  readonly debit: bigint
  readonly credit: bigint
}

/** A fact that moves money, from one event, before any rule says which accounts it moves. */
export type PostingFact = {
  readonly kind: PostingKind
  readonly eventId: string
  readonly streamName: string
  readonly merchantId: string
  readonly merchantOrderId: string | null
  readonly merchantRefundId: string | null
  readonly merchantSubscribeId: string | null
  /** When the money moved: the gateway's complete time when it reports one, else when satang observed the fact. */
  readonly postedAt: Date
  readonly description: string
  /** Satang, > 0. */
  readonly amount: bigint
  /** The order's channel (its `service`), `subscription`, or `unknown`. */
  readonly channel: string
  readonly currency: string
}

/** One version of the posting rules: the balanced lines of a fact. */
export type PostingRules = {
  readonly version: number
  /** What this version changed, for `satang report ledger` and docs/finance.md. */
  readonly summary: string
  readonly linesOf: (f: PostingFact) => ReadonlyArray<PostingLine>
}

/** Every version of the rules there ever was, and the one new postings use (the newest). */
export type RuleBook = {
  readonly current: PostingRules
  readonly versions: ReadonlyMap<number, PostingRules>
}

/** Dr `debitAccount` / Cr `creditAccount`, `amount` each. */
export const debitCredit = (debitAccount: LedgerAccount, creditAccount: LedgerAccount, channel: string, currency: string, amount: bigint): ReadonlyArray<PostingLine> => [
  { line: 1, account: debitAccount, channel, currency, debit: amount, credit: 0n },
  { line: 2, account: creditAccount, channel, currency, debit: 0n, credit: amount },
]

/**
 * Version 1: paid order Dr gateway_receivable / Cr sales; successful refund Dr refunds /
 * Cr gateway_receivable; subscription charge Dr gateway_receivable / Cr subscription_sales. On the
 * fact's channel, in its currency, for its amount.
 */
export const POSTING_RULES_V1: PostingRules = {
  version: 1,
  summary: 'paid order: Dr gateway_receivable / Cr sales; refund: Dr refunds / Cr gateway_receivable; subscription charge: Dr gateway_receivable / Cr subscription_sales',
  linesOf: (f) => {
    switch (f.kind) {
      case 'order_paid':
        return debitCredit('gateway_receivable', 'sales', f.channel, f.currency, f.amount)
      case 'refund_succeeded':
        return debitCredit('refunds', 'gateway_receivable', f.channel, f.currency, f.amount)
      case 'subscription_charged':
        return debitCredit('gateway_receivable', 'subscription_sales', f.channel, f.currency, f.amount)
    }
  },
}

/** A rule book of these versions (1..n, each once); the newest is current. */
export const ruleBookOf = (...rules: ReadonlyArray<PostingRules>): RuleBook => {
  const versions = new Map(rules.map((r) => [r.version, r] as const))
  const newest = Math.max(...versions.keys())
  const current = versions.get(newest)
  if (current === undefined || versions.size !== rules.length || [...versions.keys()].some((v) => !Number.isSafeInteger(v) || v < 1 || v > newest)) throw new Error('a rule book holds versions 1..n, each once')
  for (let v = 1; v <= newest; v++) if (!versions.has(v)) throw new Error(`a rule book holds versions 1..n: version ${String(v)} is missing`)
  if (newest > 300) throw new Error('rule versions above 300 do not fit the adjustment line numbers')
  return { current, versions }
}

/** The posting rules in force. A new version is added here (the old ones stay) and documented in docs/finance.md "Posting rules". */
export const POSTING_RULE_BOOK: RuleBook = ruleBookOf(POSTING_RULES_V1)

/** The first line number of the adjustment lines to `version`. */
export const adjustmentLineBase = (version: number): number => 100 * version

/**
 * The lines that take a fact booked under `from` to what `to` books: per account, channel and currency
 * the difference of the two, on the side it falls on. Balanced (both versions are); empty when the
 * versions book the fact alike.
 */
export const adjustmentLines = (f: PostingFact, from: PostingRules, to: PostingRules): ReadonlyArray<PostingLine> => {
  const net = new Map<string, { account: LedgerAccount; channel: string; currency: string; amount: bigint }>()
  const add = (l: PostingLine, sign: bigint): void => {
    const key = `${l.account}\u0000${l.channel}\u0000${l.currency}`
    const n = net.get(key) ?? { account: l.account, channel: l.channel, currency: l.currency, amount: 0n }
    net.set(key, { ...n, amount: n.amount + sign * (l.debit - l.credit) })
  }
  for (const l of from.linesOf(f)) add(l, -1n)
  for (const l of to.linesOf(f)) add(l, 1n)
  const base = adjustmentLineBase(to.version)
  return [...net.values()]
    .filter((n) => n.amount !== 0n)
    .map((n, i) => ({ line: base + i + 1, account: n.account, channel: n.channel, currency: n.currency, debit: n.amount > 0n ? n.amount : 0n, credit: n.amount < 0n ? -n.amount : 0n }))
}
