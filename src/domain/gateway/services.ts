import { oneOf } from './text-codecs.ts'

/** All operations share `{base_url}/gateway`; the body or query field `service` selects the operation. */

export const PAYMENT_QUERY_SERVICE = 'svc.payment.query'
export const REFUND_QUERY_SERVICE = 'svc.refund.query'
export const CHECKOUT_APPLY_SERVICE = 'svc.checkout.apply'
export const SUBSCRIPTION_CREATE_SERVICE = 'svc.recurring.create'
export const SUBSCRIPTION_UPDATE_SERVICE = 'svc.recurring.update'
export const SUBSCRIPTION_CANCEL_SERVICE = 'svc.recurring.cancel'

/** Endpoint 1: the channel codes of a direct payment. */
export const DIRECT_SERVICES = [
  'svc.wallet_a.offline.pay',
  'svc.wallet_a.pay',
  'svc.wallet_b.pay',
  'svc.thaiqr.pay',
  'svc.mobile.banking.pay',
  'svc.wallet_c.pay',
  'svc.wallet_e.pay',
  'svc.wallet_d.pay',
  'svc.wallet_f.pay',
  'svc.bankcard.pay',
  'svc.direct-debit.pay',
] as const
export type DirectService = (typeof DIRECT_SERVICES)[number]
export const DirectService = oneOf('DirectService', DIRECT_SERVICES)

export const isDirectService = (u: unknown): u is DirectService => DirectService.is(u)
