import * as E from 'fp-ts/lib/Either.js'
import { orderStreamName } from '../domain/order/index.ts'
import { refundStreamName } from '../domain/refund/index.ts'
import { subscriptionStreamName } from '../domain/subscription/index.ts'
import { readAuditTrail } from './audit.ts'
import { makeCallbacks, type Callbacks } from './callbacks.ts'
import type { RecordingDeps } from './deps.ts'
import { makePayments, type Payments } from './payments.ts'
import { makeResolver, type Resolver } from './payment-resolution.ts'
import { makeRefunds, type Refunds } from './refunds.ts'
import { notFound, ok, unavailable, type ApiResult } from './results.ts'
import { makeSubscriptions, type Subscriptions } from './subscriptions.ts'

export type AuditKind = 'order' | 'refund' | 'subscription'

/** The stream of an order, refund or subscription of `merchantId`. */
export const streamOf = (kind: AuditKind, merchantId: string, id: string): string => {
  switch (kind) {
    case 'order':
      return orderStreamName(merchantId, id)
    case 'refund':
      return refundStreamName(merchantId, id)
    case 'subscription':
      return subscriptionStreamName(merchantId, id)
  }
}

/** Everything the merchant API and the callback endpoints do, over the event store and the gateway. */
export type Recording = {
  readonly payments: Payments
  readonly refunds: Refunds
  readonly subscriptions: Subscriptions
  readonly callbacks: Callbacks
  readonly resolver: Resolver
  readonly audit: (kind: AuditKind, id: string) => Promise<ApiResult>
}

export const makeRecording = (deps: RecordingDeps): Recording => {
  const resolver = makeResolver(deps)
  const audit = async (kind: AuditKind, id: string): Promise<ApiResult> => {
    if (id === '' || id.length > 64) return { _tag: 'InvalidRequest', violations: [{ path: 'id', rule: 'must be 1 to 64 characters' }] }
    const trail = await readAuditTrail(deps, streamOf(kind, deps.merchantId, id))()
    if (E.isLeft(trail)) return unavailable('the event store could not be read')
    return trail.right === undefined ? notFound(`no ${kind} ${id}`) : ok({ kind, id, stream: trail.right.stream, events: trail.right.events.map((e) => ({ ...e })) })
  }
  return {
    payments: makePayments(deps, resolver),
    refunds: makeRefunds(deps),
    subscriptions: makeSubscriptions(deps),
    callbacks: makeCallbacks(deps),
    resolver,
    audit,
  }
}

export type { RecordingDeps } from './deps.ts'
export type { ApiResult, CallbackResult } from './results.ts'
