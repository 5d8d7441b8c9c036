import type * as E from 'fp-ts/lib/Either.js'
import { parseAmount, type Satang } from '../money.ts'

/*
 * Decoded messages keep amounts as the wire text (the signature covers it); these read them as satang.
 * The Either is Right for every value a codec of this folder decoded.
 */

export const orderAmountOf = (m: { readonly order_amount: string }): E.Either<ReadonlyArray<string>, Satang> => parseAmount(m.order_amount)

export const refundAmountOf = (m: { readonly refund_amount: string }): E.Either<ReadonlyArray<string>, Satang> => parseAmount(m.refund_amount)

export const billingAmountOf = (m: { readonly billing_amount: string }): E.Either<ReadonlyArray<string>, Satang> => parseAmount(m.billing_amount)
