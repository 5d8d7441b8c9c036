import type { Json, JsonObject } from '../../events/envelope.ts'
import { isBreakClass, type BreakClass } from '../break-class.ts'
import { bahtText, satangOfText } from './people.ts'

/*
 * A break explained to a person: both views' fields aligned by what they mean (amount, status,
 * refunded amount, currency, times, ids), the differing ones first; one sentence in one unit; what the
 * class means and what to do (docs/finance.md "Break classes"). Pure presentation of what the break
 * holds: the views are JSON as the run kept them (satang as digit strings).
 */

/** How a field's values print: money in baht, an instant in Bangkok time, or text. */
export type FieldKind = 'money' | 'time' | 'text'

export type AlignedField = {
  readonly label: string
  readonly kind: FieldKind
  /** The value on each side (satang digits for money, ISO-8601 for times), null when that side does not say. */
  readonly satang: string | null
  readonly gateway: string | null
  /** Both sides say, and say different things. */
  readonly differs: boolean
}

const get = (o: JsonObject, path: ReadonlyArray<string>): Json | undefined => {
  let v: Json | undefined = o
  for (const k of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined
    v = (v as JsonObject)[k]
  }
  return v
}

const textOf = (v: Json | undefined): string | null => {
  if (v === undefined || v === null) return null
  if (typeof v === 'string') return v
  if (Array.isArray(v)) return v.length === 0 ? null : v.map((x) => textOf(x) ?? '').join(', ')
  // A number or a boolean of a JSON view prints as JSON writes it, which is what String gives it too.
  return JSON.stringify(v)
}

/** A status as `PS (success, final)` when the view says what it means. */
const statusOf = (o: JsonObject): string | null => {
  const code = textOf(get(o, ['status', 'code']))
  if (code === null) return null
  const outcome = textOf(get(o, ['status', 'outcome']))
  return outcome === null ? code : `${code} (${outcome})`
}

/** Satang of a money field: `amount_satang` digits, else a baht text field. */
const moneyOf = (o: JsonObject, satangKey: string, bahtKey?: string): string | null => {
  const s = textOf(get(o, [satangKey]))
  if (s !== null && satangOfText(s, true) !== null) return s
  if (bahtKey === undefined) return null
  const b = textOf(get(o, [bahtKey]))
  const v = b === null ? null : satangOfText(b, false)
  return v === null ? null : v.toString()
}

type Row = { readonly label: string; readonly kind: FieldKind; readonly satang: string | null; readonly gateway: string | null; readonly compare?: (a: string, b: string) => boolean }

const row = (r: Row): AlignedField => ({
  label: r.label,
  kind: r.kind,
  satang: r.satang,
  gateway: r.gateway,
  differs: r.satang !== null && r.gateway !== null && !(r.compare ?? ((a, b) => a === b))(r.satang, r.gateway),
})

/** The gateway's answer when it gave none: "not found", or why it could not answer. */
const answerOf = (g: JsonObject): string | null => {
  if (get(g, ['answered']) === false) return `no answer (${textOf(get(g, ['reason'])) ?? 'failed'})`
  if (get(g, ['found']) !== false) return null
  const message = textOf(get(g, ['message']))
  return message === null ? 'not found' : `not found: ${message}`
}

/** Both views' fields aligned by meaning, differing ones first (then in a fixed order), rows neither side fills left out. */
export const alignedFields = (itemKind: string, satang: JsonObject, gateway: JsonObject): ReadonlyArray<AlignedField> => {
  const sameStatus = (a: string, b: string): boolean => a.split(' ')[0] === b.split(' ')[0]
  let rows: Row[]
  if (itemKind === 'subscription') {
    rows = [
      { label: 'What happened', kind: 'text', satang: textOf(get(satang, ['observed'])), gateway: textOf(get(gateway, ['expected'])) },
      { label: 'Date', kind: 'text', satang: textOf(get(satang, ['date'])), gateway: textOf(get(gateway, ['date'])) },
      { label: 'Amount billed', kind: 'money', satang: null, gateway: moneyOf(gateway, 'billing_amount_satang') },
      { label: 'Currency', kind: 'text', satang: null, gateway: textOf(get(gateway, ['currency'])) },
    ]
  } else {
    const refund = itemKind === 'refund'
    rows = [
      { label: 'Amount', kind: 'money', satang: moneyOf(satang, 'amount_satang'), gateway: moneyOf(gateway, 'amount_satang', refund ? 'refund_amount' : 'order_amount') },
      { label: 'Status', kind: 'text', satang: statusOf(satang), gateway: answerOf(gateway) ?? statusOf(gateway), compare: sameStatus },
      ...(refund ? [] : [{ label: 'Refunded amount', kind: 'money' as const, satang: moneyOf(satang, 'refunded_satang'), gateway: moneyOf(gateway, 'refunded_satang') }]),
      { label: 'Currency', kind: 'text', satang: textOf(get(satang, ['currency'])), gateway: textOf(get(gateway, ['currency'])) },
      { label: 'Created', kind: 'time', satang: textOf(get(satang, ['created_at'])), gateway: null },
      { label: 'Completed', kind: 'time', satang: null, gateway: textOf(get(gateway, ['complete_time'])) },
      { label: 'Status observed', kind: 'time', satang: textOf(get(satang, ['status', 'observed_at'])), gateway: null },
      { label: 'Merchant order id', kind: 'text', satang: textOf(get(satang, ['merchant_order_id'])), gateway: textOf(get(gateway, ['merchant_order_id'])) },
      ...(refund
        ? [
            { label: 'Merchant refund id', kind: 'text' as const, satang: textOf(get(satang, ['merchant_refund_id'])), gateway: null },
            { label: 'Gateway refund id', kind: 'text' as const, satang: null, gateway: textOf(get(gateway, ['refund_order_id'])) },
          ]
        : [{ label: 'Gateway order id', kind: 'text' as const, satang: textOf(get(satang, ['gateway_order_id'])), gateway: textOf(get(gateway, ['order_id'])) }]),
      { label: 'Refund ids', kind: 'text', satang: textOf(get(satang, ['refund_ids'])), gateway: null },
      { label: 'Gateway trace id', kind: 'text', satang: null, gateway: textOf(get(gateway, ['trace_id'])) },
    ]
  }
  const fields = rows.filter((r) => r.satang !== null || r.gateway !== null).map(row)
  return [...fields.filter((f) => f.differs), ...fields.filter((f) => !f.differs)]
}

/** What each class means and what to do about it (docs/finance.md "Break classes: what they mean, what to do"). */
export const BREAK_GUIDANCE: Readonly<Record<BreakClass, { readonly meaning: string; readonly action: string }>> = {
  amount_mismatch: { meaning: 'the gateway holds another amount than satang (at stake: the difference)', action: 'ask the gateway which amount was charged; correct the order at the source; acknowledge with the outcome' },
  currency_mismatch: { meaning: 'the gateway holds another currency', action: 'as for an amount mismatch: a configuration or integration defect' },
  status_conflict: {
    meaning: 'satang holds a final status the gateway contradicts (PS here, PI or PF there), or a create satang recorded as failed that the gateway has',
    action: "ask the gateway for the payment's history; a reversal or chargeback is settled outside satang",
  },
  missing_at_gateway: { meaning: 'satang recorded an accepted create (or observed the refund); the gateway says "not found" past the grace', action: 'the gateway lost it or it was created under another id: contact the gateway; no money moved if it never existed there' },
  missing_internal: { meaning: 'the gateway sent a verified callback (or answer) for an order or refund satang never created', action: "another system uses the merchant account, or satang's create never recorded: find the order, book it" },
  stale_pending: { meaning: "still pending on both sides long past the link's expiry", action: 'the payer abandoned it: usually acknowledge; chase if goods were shipped' },
  unknown_status: { meaning: 'the gateway reports a status code no status table knows', action: 'add the code to SATANG_PAYMENT_STATUSES / SATANG_REFUND_STATUSES once the gateway says what it means; the next run classifies it' },
  refund_exceeds_payment: { meaning: 'refunds recorded for an order total more than it paid, or a refund above what is still refundable', action: 'a double refund: recover it from the payer or the gateway' },
  query_failed: { meaning: 'the gateway could not answer after retries: the item is unchecked', action: 'usually transient: the next run (or sweep) checks it again; persistent failures are an outage' },
  missing_charge: { meaning: 'a subscription charge was due (or a retry) and no charge or failure was observed after the grace', action: 'a lost notification or a charge the gateway skipped: ask the gateway' },
  unexpected_charge: { meaning: 'a charge observed that was not due: after the cancel, after the last term, twice for one cycle', action: 'refund the payer; find who changed the plan' },
  suspension_mismatch: { meaning: 'SUSPEND without three consecutive failures, or three failures and still charging', action: "ask the gateway; the plan's schedule and the gateway's disagree" },
}

export const guidanceOf = (cls: string): { readonly meaning: string; readonly action: string } | null => (isBreakClass(cls) ? BREAK_GUIDANCE[cls] : null)

/** A field that differs: both sides say (`differs` holds only then), and say different things. */
const differing = (f: AlignedField): f is AlignedField & { readonly satang: string; readonly gateway: string } => f.differs

const shownValue = (f: AlignedField, v: string): string => (f.kind === 'money' ? bahtText(BigInt(v)) : v)

/**
 * One sentence in one unit: what differs and the money at stake, e.g.
 * `satang recorded ฿99.00, the gateway says ฿90.00: ฿9.00 at stake.`
 */
export const breakSentence = (fields: ReadonlyArray<AlignedField>, atStake: bigint, detail: string): string => {
  const stake = `${bahtText(atStake)} at stake`
  const first = fields.find(differing)
  if (first !== undefined) {
    const what = first.label === 'Amount' ? '' : `${first.label.toLowerCase()} `
    return `satang recorded ${what}${shownValue(first, first.satang)}, the gateway says ${shownValue(first, first.gateway)}: ${stake}.`
  }
  // No field differs, so satang holds no status here: one beside "not found" or "no answer" differs from it.
  const gave = fields.find((f) => f.label === 'Status')?.gateway ?? null
  if (gave !== null && (gave.startsWith('not found') || gave.startsWith('no answer'))) {
    const amount = fields.find((f) => f.label === 'Amount')?.satang ?? null
    return `satang recorded ${amount === null ? 'it' : bahtText(BigInt(amount))}, the gateway gave ${gave}: ${stake}.`
  }
  return `${detail.replace(/[.\s]+$/, '')}: ${stake}.`
}
