import type { Json, JsonObject } from '../../../application/ports/event-store.ts'
import { isJsonObject } from '../../../domain/events/json.ts'
import { bahtText, satangOfText } from '../../../domain/reconciliation/report/people.ts'
import { html, type Html } from './html.ts'
import { bangkokTime } from './layout.ts'

/*
 * An order's, refund's or subscription's state as labelled lines a person reads (status, paid,
 * amounts, refunds, times), from the JSON the API answers: amounts in baht, instants in Bangkok time,
 * nothing printed as `null`. The JSON itself stays one click away on the page.
 */

export type SummaryLine = { readonly label: string; readonly value: Html; readonly money: boolean }

/** Keys shown first, in this order, with their labels; any other key follows with a label made from its name. */
const FIRST: ReadonlyArray<readonly [string, string]> = [
  ['status', 'Status'],
  ['paid', 'Paid'],
  ['order_amount', 'Amount'],
  ['refund_amount', 'Refund amount'],
  ['amount', 'Amount'],
  ['billing_amount', 'Billing amount'],
  ['refunded_amount', 'Refunded'],
  ['refundable_amount', 'Still refundable'],
  ['order_currency', 'Currency'],
  ['currency', 'Currency'],
  ['merchant_order_id', 'Merchant order id'],
  ['merchant_refund_id', 'Merchant refund id'],
  ['merchant_subscribe_id', 'Merchant subscription id'],
  ['gateway_order_id', 'Gateway order id'],
  ['order_desc', 'Description'],
  ['created_at', 'Created'],
]

/** Left out of the summary (in the JSON): the as-of stamp and the channel's raw answer. */
const SKIP = new Set(['as_of', 'served_from', 'events_applied', 'gateway_response', 'merchant_urls', 'link_url'])

const labelOf = (key: string): string => {
  const known = FIRST.find(([k]) => k === key)?.[1]
  if (known !== undefined) return known
  const words = key.replace(/_at$/, '').replace(/_satang$/, '').split('_').join(' ')
  return `${(words[0] ?? '').toUpperCase()}${words.slice(1)}`
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/
const isMoneyKey = (key: string): boolean => /(^|_)amount$/.test(key) || key.endsWith('_satang')

const valueOf = (key: string, v: Json): { readonly value: Html; readonly money: boolean } => {
  if (v === null) return { value: html`<span class="muted">—</span>`, money: false }
  if (typeof v === 'boolean') return { value: html`${v ? 'yes' : 'no'}`, money: false }
  if (typeof v === 'number') return { value: html`${v.toLocaleString('en-US')}`, money: false }
  if (typeof v === 'string') {
    if (isMoneyKey(key)) {
      const s = satangOfText(v, key.endsWith('_satang'))
      if (s !== null) return { value: html`${bahtText(s)}`, money: true }
    }
    if (ISO.test(v)) return { value: bangkokTime(new Date(v)), money: false }
    return { value: html`${v}`, money: false }
  }
  if (Array.isArray(v)) return { value: v.length === 0 ? html`<span class="muted">none</span>` : html`${v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(', ')}`, money: false }
  if (!isJsonObject(v)) return { value: html`${JSON.stringify(v)}`, money: false }
  // A status: its code and meaning, where it came from and when.
  if (typeof v['code'] === 'string') {
    const meaning = typeof v['meaning'] === 'string' ? v['meaning'] : ''
    const source = typeof v['source'] === 'string' ? v['source'] : null
    const at = typeof v['observed_at'] === 'string' && ISO.test(v['observed_at']) ? new Date(v['observed_at']) : null
    return { value: html`<b>${v['code']}</b>${meaning === '' ? '' : html` ${meaning}`}${typeof v['final'] === 'boolean' ? (v['final'] ? ' (final)' : ' (not final)') : ''}${source === null ? '' : html`, from the ${source.replace('_', ' ')}`}${at === null ? '' : html`, ${bangkokTime(at)}`}`, money: false }
  }
  // Any other object: its fields on one line, the same way.
  const parts = Object.entries(v).filter(([, x]) => x !== null)
  return { value: parts.length === 0 ? html`<span class="muted">—</span>` : html`${parts.map(([k, x], i) => html`${i === 0 ? '' : '; '}${labelOf(k).toLowerCase()} ${valueOf(k, x).value}`)}`, money: false }
}

export const stateSummary = (view: JsonObject): ReadonlyArray<SummaryLine> => {
  const keys = [...FIRST.map(([k]) => k).filter((k) => k in view), ...Object.keys(view).filter((k) => !FIRST.some(([f]) => f === k))].filter((k) => !SKIP.has(k))
  return keys.map((k) => {
    const v = view[k]
    const shown = v === undefined ? { value: html`—`, money: false } : valueOf(k, v)
    return { label: labelOf(k), ...shown }
  })
}
