import * as t from 'io-ts'
import { nullable } from '../domain/events/codecs.ts'
import { PaymentView } from '../domain/order/view.ts'
import { IsoInstantText } from '../domain/views.ts'
import { ServedFrom } from './read-models.ts'
import { RefundView } from './refunds.ts'
import { SubscriptionView } from './subscriptions.ts'

/*
 * The JSON bodies the merchant API answers with a payment, a refund or a subscription: the view and
 * what the use case adds to it (where it was read from, a replay, a refresh, a past state). The OpenAPI
 * document's response schemas are generated from these codecs; they are exact, so a field the code
 * adds without adding it here fails the generated client's test (test/e2e/openapi-client.e2e.test.ts).
 */

/** `?as_of=`: the state as the log stood then (as-of.ts). */
const AsOfStamp = t.partial({
  as_of: t.type({ requested: t.string, position: nullable(t.string), instant: IsoInstantText }),
  events_applied: t.number,
})

export const PaymentAnswer = t.exact(
  t.intersection([
    PaymentView,
    ServedFrom,
    AsOfStamp,
    t.partial({
      /** The same create again, answered from the log. */
      replayed: t.boolean,
      /** `?refresh=true` whose query could not settle the outcome yet. */
      refresh: t.type({ resolved: t.boolean, why: t.string }),
    }),
  ]),
  'Payment',
)

export const RefundAnswer = t.exact(
  t.intersection([
    RefundView,
    ServedFrom,
    AsOfStamp,
    t.partial({
      /** `?refresh=true`: whether the gateway knew the refund (`code`, `trace_id`: its answer when it did not). */
      refresh: t.intersection([t.type({ found: t.boolean }), t.partial({ code: t.number, trace_id: t.string })]),
    }),
  ]),
  'Refund',
)

export const SubscriptionAnswer = t.exact(t.intersection([SubscriptionView, ServedFrom, AsOfStamp]), 'Subscription')
