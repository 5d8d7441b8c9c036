import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant, nullable, SatangAmount } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/** How the payer pays: a direct payment (endpoint 1) or the hosted checkout (endpoint 4). */
export const OrderOperation = oneOf('OrderOperation', ['direct', 'checkout'])
export type OrderOperation = t.TypeOf<typeof OrderOperation>

/** The merchant's own callback pages. satang gives the gateway its own URLs and sends the payer on to these. */
export const MerchantUrls = t.strict(
  { notifyUrl: nullable(t.string), redirectUrl: nullable(t.string), cancelUrl: nullable(t.string) },
  'MerchantUrls',
)
export type MerchantUrls = t.TypeOf<typeof MerchantUrls>

/** A merchant asked satang for a payment. No payer data: the merchant keeps it in its own systems. */
const V1 = t.strict(
  {
    merchantId: t.string,
    storeId: nullable(t.string),
    merchantOrderId: t.string,
    operation: OrderOperation,
    service: t.string,
    paymentMethod: nullable(t.string),
    productCode: nullable(t.string),
    amount: SatangAmount,
    currency: t.string,
    orderDesc: t.string,
    merchantUrls: MerchantUrls,
    createdAt: Instant,
  },
  'OrderCreatedV1',
)

export const orderCreated = defineEvent('OrderCreated', { 1: V1 })
export type OrderCreatedData = t.TypeOf<typeof V1>
export type OrderCreated = DomainEventOf<'OrderCreated', OrderCreatedData>
