import * as E from 'fp-ts/lib/Either.js'
import type * as t from 'io-ts'
import { MerchantOrderId, MerchantRefundId } from '../domain/gateway/fields.ts'
import { text } from '../domain/gateway/text-codecs.ts'
import { orderStreamName } from '../domain/order/index.ts'
import { refundStreamName } from '../domain/refund/index.ts'
import { subscriptionStreamName } from '../domain/subscription/index.ts'
import { decodeAll } from '../domain/violations.ts'
import { readAuditTrail } from './audit.ts'
import { makeCallbacks, type Callbacks } from './callbacks.ts'
import type { RecordingDeps } from './deps.ts'
import { makePayments, type Payments } from './payments.ts'
import { makeResolver, type Resolver } from './payment-resolution.ts'
import { makeRefunds, type Refunds } from './refunds.ts'
import { invalid, notFound, ok, unreadable, type UseCaseResult } from './results.ts'
import { makeSubscriptions, type Subscriptions } from './subscriptions.ts'

export type AuditKind = 'order' | 'refund' | 'subscription'

/** The id field each kind is audited by, with its rules (a merchant_order_id has a character set; the others only a length). */
const AUDIT_IDS: Readonly<Record<AuditKind, { readonly field: string; readonly codec: t.Type<string, string, unknown> }>> = {
  order: { field: 'merchant_order_id', codec: MerchantOrderId },
  refund: { field: 'merchant_refund_id', codec: MerchantRefundId },
  subscription: { field: 'merchant_subscribe_id', codec: text('merchant_subscribe_id', 64) },
}

/** Why `id` cannot be the id of an order, refund or subscription: its field and the rules it breaks; null when it can. */
export const auditIdProblem = (kind: AuditKind, id: string): { readonly field: string; readonly rules: ReadonlyArray<string> } | null => {
  const { field, codec } = AUDIT_IDS[kind]
  const decoded = decodeAll(codec, id)
  return E.isLeft(decoded) ? { field, rules: decoded.left.map((v) => v.rule) } : null
}

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
  readonly audit: (kind: AuditKind, id: string) => Promise<UseCaseResult>
}

export const makeRecording = (deps: RecordingDeps): Recording => {
  const resolver = makeResolver(deps)
  const audit = async (kind: AuditKind, id: string): Promise<UseCaseResult> => {
    const problem = auditIdProblem(kind, id)
    if (problem !== null) return invalid(problem.rules.map((rule) => ({ path: 'id', rule: `${rule} (${problem.field})` })))
    const trail = await readAuditTrail(deps, streamOf(kind, deps.merchantId, id))()
    if (E.isLeft(trail)) return unreadable(trail.left)
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
export type { UseCaseResult, CallbackResult } from './results.ts'
