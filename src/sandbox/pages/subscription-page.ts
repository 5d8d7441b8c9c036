import { formatCalendarDate } from '../../domain/bangkok-time.ts'
import { billingDates } from '../../domain/subscription-schedule.ts'
import { planOf } from '../billing.ts'
import type { SandboxSubscription } from '../state.ts'
import { details, html, messagePage, page } from './html.ts'
import { ok, type PageReply } from './order-pages.ts'

const PREVIEW = 6

const every = (s: SandboxSubscription): string => {
  const unit = s.intervalType.toLowerCase().replace(/ly$/, '').replace(/^dai$/, 'day')
  return s.interval === 1 ? `every ${unit}` : `every ${String(s.interval)} ${unit}s`
}

/** The page of a subscription's `link_url`, where the payer authorises the plan. */
export const subscriptionPage = (s: SandboxSubscription): PageReply => {
  if (s.cancelled) return ok(messagePage('Subscription cancelled', `Subscription ${s.merchantSubscribeId} was cancelled by the merchant.`))
  if (s.authorised) return ok(messagePage('Already authorised', `Subscription ${s.merchantSubscribeId} is authorised (${s.status}).`))
  const dates = billingDates({ ...planOf(s), totalTerms: Math.min(s.totalTerms, PREVIEW) }).map(formatCalendarDate)
  const body = html`<h1>Authorise a subscription</h1>
${details([
  ['Merchant', s.merchantId],
  ['Plan', s.planName],
  ['Description', s.planDesc],
  ['Amount', `${s.billingAmount} ${s.billingCurrency} ${every(s)}`],
  ['Terms', String(s.totalTerms)],
  ['First charge', s.startDate],
  ['Retry a failed charge', s.retry === 'Y' ? 'yes, on the following days (at most 3 attempts)' : 'no'],
])}
<h2>Billing dates</h2>
<ol>${dates.map((d) => html`<li>${d}</li>`)}${s.totalTerms > PREVIEW ? html`<li>…</li>` : html``}</ol>
<form method="post" action="/subscriptions/${s.recurringBillId}/authorise">
<div class="actions"><button type="submit" class="primary">Authorise</button></div>
</form>`
  return ok(page(`Subscription ${s.merchantSubscribeId}`, body))
}
