import * as E from 'fp-ts/lib/Either.js'
import { describeHandleError } from '../../application/command-handler.ts'
import type { ScopedSubscription } from '../../application/ports/read-models.ts'
import { load, subscriptionKind } from '../../application/streams.ts'
import type { ItemRecord } from '../../domain/reconciliation/run.ts'
import { checkBilling, subscriptionItemOf } from '../../domain/reconciliation/subscription-billing.ts'
import { ItemStoreFailed } from './check-payment.ts'
import type { RunContext } from './context.ts'
import { chargeRef, itemRecordOf } from './item-record.ts'

/**
 * One subscription's billing on `dates` (the run's days, and the dates of its breaks still open): what
 * the plan made due against the charges and failures observed. Nothing is sent to the gateway (the
 * spec has no subscription query); the evidence is the notifications already in the stream.
 */
export const checkSubscription = async (run: RunContext, s: ScopedSubscription, dates: ReadonlySet<string>): Promise<ReadonlyArray<ItemRecord>> => {
  const loaded = await load(run.deps, subscriptionKind, s.stream)()
  if (E.isLeft(loaded)) throw new ItemStoreFailed(`subscription ${s.merchantSubscribeId}: ${describeHandleError(loaded.left, () => 'rejected')}`)
  const item = subscriptionItemOf(s.stream, loaded.right.events)
  if (item === null) return []
  return checkBilling(item, dates, { asOf: run.policy.asOf, chargeGraceMs: run.policy.chargeGraceMs }).map((d) =>
    itemRecordOf(run, {
      ref: chargeRef(s.merchantSubscribeId, d.date, s.stream),
      day: d.date,
      amount: item.billingAmount,
      comparison: d.comparison,
      satangView: d.observed,
      gatewayView: d.expected,
      evidence: { traceId: null, observationKey: null },
    }),
  )
}
