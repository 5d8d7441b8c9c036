import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as t from 'io-ts'
import { AmountText, parseAmount } from '../money.ts'
import { lengthOf, matches, oneOf, text, textWith } from './text-codecs.ts'

/** Field codecs shared by the gateway messages; each rule cites where the spec states it. */

/** Versioning: every request carries `version` = `v1`, the only value defined. */
export const Version = oneOf('Version', ['v1'])

/** Authentication and endpoints 5, 9: `sign_type` is fixed `RSA`. */
export const SignType = oneOf('SignType', ['RSA'])

/** Conventions: `merchant_id` and `store_id` are 18 digits and start with `14`. */
export const MerchantId = textWith('MerchantId', [matches(/^14\d{16}$/, 'must be 18 digits starting with 14')])

/**
 * The subscription pages declare `merchant_id` / `store_id` as string(20) while the conventions say
 * 18 digits starting with 14. We keep "digits starting with 14" and accept 18 to 20 digits there.
 */
export const SubscriptionMerchantId = textWith('SubscriptionMerchantId', [
  matches(/^14\d{16,18}$/, 'must be 18 to 20 digits starting with 14'),
])

/** Payment order: `merchant_order_id` is at most 64 characters of digits, letters, dash and underline. */
export const MerchantOrderId = text(
  'MerchantOrderId',
  64,
  matches(/^[A-Za-z0-9_-]*$/, 'must contain only digits, letters, dash and underline'),
)

/** Subscription: `merchant_subscribe_id` string(64); the spec gives it no character set. */
export const MerchantSubscribeId = text('MerchantSubscribeId', 64)

/** Refund record: `merchant_refund_id` string(64); the spec gives it no character set. */
export const MerchantRefundId = text('MerchantRefundId', 64)

/** Gateway bill ids (`order_id`, `refund_order_id`): string(18). */
export const GatewayOrderId = text('GatewayOrderId', 18)

/**
 * Currencies in what the gateway sends (answers, redirect forms, notifications, queries): 3 characters,
 * and `THB` is the one used; the supported list is "not shown", so any 3-letter uppercase code decodes
 * there — an observation in another currency is recorded as a discrepancy, not refused as undecodable.
 */
export const Currency = textWith('Currency', [matches(/^[A-Z]{3}$/, 'must be a 3-letter uppercase currency code such as THB')])

/**
 * Currencies in what satang sends (`order_currency` of endpoints 1 and 4, `billing_currency` of 6 and
 * 7): "Currency used: THB", and satang books Thai baht, so nothing else is asked of the gateway.
 */
export const RequestCurrency = textWith('RequestCurrency', [(s) => (s === 'THB' ? undefined : 'must be THB (the only currency the gateway uses)')])

const isZeroAmount = (s: string): boolean => {
  const amount = parseAmount(s)
  return E.isRight(amount) && amount.right === 0n
}

/**
 * Amounts of creates (`order_amount` of endpoints 1 and 4, `billing_amount` of 6 and 7): the 8,2
 * grammar of `AmountText`, and more than zero — a payment or a charge of nothing collects nothing.
 * What the gateway sends keeps `AmountText` (a zero there is observed, not refused).
 */
export const ChargeAmount = new t.Type<string, string, unknown>(
  'ChargeAmount',
  (u): u is string => AmountText.is(u) && !isZeroAmount(u),
  (u, c) => pipe(AmountText.validate(u, c), E.chain((s) => (isZeroAmount(s) ? t.failure(u, c, 'must be more than 0') : t.success(s)))),
  t.identity,
)

/** `order_status` / `refund_status`: a code of exactly 2 characters (States); the meaning lives in statuses.ts. */
export const StatusCode = textWith('StatusCode', [
  (s) => (lengthOf(s) === 2 && !/\s/.test(s) ? undefined : 'must be a 2-character status code such as WP or PS'),
])

/** A digit string of declared length `max` (counts, seconds of validity). */
export const digits = (name: string, max: number): t.Type<string, string, unknown> =>
  text(name, max, matches(/^\d*$/, 'must contain only digits'))

/**
 * URLs the gateway calls or sends the payer to (`notify_url`, `redirect_url`, `cancel_url`). The spec
 * only declares 256 characters; we also require an absolute http(s) URL, or the gateway could never
 * reach it. `app_callback_url` and response links are not checked this way (they may be app links).
 */
export const HttpUrl = text('HttpUrl', 256, matches(/^https?:\/\/[^\s/?#]+\S*$/i, 'must be an absolute http or https URL'))

/**
 * `mobile_number`: "Thai mobile number, no country code". Thai mobile numbers are 10 digits: a leading
 * 0 then 6, 8 or 9 (`0[689]` + 8 digits), e.g. 0812345678.
 */
export const ThaiMobileNumber = text(
  'ThaiMobileNumber',
  20,
  matches(/^0[689]\d{8}$/, 'must be a Thai mobile number without country code: 10 digits starting with 06, 08 or 09'),
)

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/

const isIpv6 = (s: string): boolean => {
  const halves = s.split('::')
  if (halves.length > 2) return false
  const groups = halves.flatMap((h) => (h === '' ? [] : h.split(':')))
  const last = groups[groups.length - 1]
  // An embedded IPv4 tail (::ffff:192.0.2.1) stands for two groups.
  const embeddedV4 = last !== undefined && last.includes('.')
  if (embeddedV4 && !IPV4.test(last)) return false
  const hex = embeddedV4 ? groups.slice(0, -1) : groups
  if (!hex.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false
  const count = hex.length + (embeddedV4 ? 2 : 0)
  return halves.length === 2 ? count < 8 : count === 8
}

/** `client.remote_ip`: the payer IP address text, IPv4 dotted quad or IPv6. */
export const IpAddress = textWith('IpAddress', [
  (s) => (IPV4.test(s) || isIpv6(s) ? undefined : 'must be an IPv4 or IPv6 address such as 203.0.113.7'),
])
