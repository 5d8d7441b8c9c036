import { DIRECT_SERVICES, type DirectService } from './services.ts'
import { listOr } from './text-codecs.ts'

/**
 * Endpoint 1, "Channel codes and payment methods that occur". The spec does not show the
 * payment_method values of `svc.bankcard.pay` and `svc.direct-debit.pay`; those two are open (see
 * `OPEN_METHOD_SERVICES`). `CARD` is listed for bankcard because the Enumerations section shows it as a
 * `payment_method` (next to the product code BANKCARD_PAY_ONLINE).
 */
export const DIRECT_PAYMENT_METHODS = {
  'svc.wallet_a.offline.pay': ['MERCHANT_SCAN', 'DYNAMIC_CODE', 'INAPP_PAYMENT'],
  'svc.wallet_a.pay': ['APP_PAYMENT', 'WEB_PAYMENT', 'WAP_PAYMENT'],
  'svc.wallet_b.pay': ['DYNAMIC_CODE', 'MERCHANT_SCAN', 'INAPP_PAYMENT', 'APP_PAYMENT', 'H5_PAYMENT'],
  'svc.thaiqr.pay': ['THAI_QR'],
  'svc.mobile.banking.pay': ['BANKAPP_A_NOTIFICATION', 'BANKAPP_B_NOTIFICATION', 'BANKAPP_C_BILL', 'BANKAPP_C_CREDIT', 'BANKAPP_C_ALL'],
  'svc.wallet_c.pay': ['NORMAL_BALANCE_C'],
  'svc.wallet_e.pay': ['DIGITAL_BALANCE'],
  'svc.wallet_d.pay': ['NORMAL_BALANCE_D'],
  'svc.wallet_f.pay': ['DEEPLINK'],
  'svc.bankcard.pay': ['CARD'],
  'svc.direct-debit.pay': [],
} as const satisfies Record<DirectService, ReadonlyArray<string>>

/**
 * Services whose payment_method list is "not shown": any value of at most 32 characters is accepted,
 * except a value listed for another service (THAI_QR on bankcard is a mistake, not an unknown method).
 */
export const OPEN_METHOD_SERVICES: ReadonlySet<DirectService> = new Set<DirectService>(['svc.bankcard.pay', 'svc.direct-debit.pay'])

const knownMethods = (service: DirectService): ReadonlyArray<string> => DIRECT_PAYMENT_METHODS[service]

const ownersOf = (method: string): ReadonlyArray<DirectService> => DIRECT_SERVICES.filter((s) => knownMethods(s).includes(method))

/** Whether `method` is a payment_method of `service` (membership in the table, or open service rules). */
export const isMethodOf = (service: DirectService, method: string): boolean =>
  knownMethods(service).includes(method) || (OPEN_METHOD_SERVICES.has(service) && ownersOf(method).length === 0)

/** The broken rule when `method` is not a payment_method of `service`, else `undefined`. */
export const methodRule = (service: DirectService, method: string): string | undefined => {
  if (isMethodOf(service, method)) return undefined
  if (OPEN_METHOD_SERVICES.has(service)) return `is a payment_method of ${ownersOf(method).join(', ')}, not of ${service}`
  return `must be ${listOr(knownMethods(service))} when service is ${service}`
}

/** The case of a conditional rule, as rule texts state it: `service is X and payment_method is A or B`. */
export const describeCase = (service: DirectService, methods?: ReadonlyArray<string>): string =>
  methods === undefined ? `service is ${service}` : `service is ${service} and payment_method is ${listOr(methods)}`
