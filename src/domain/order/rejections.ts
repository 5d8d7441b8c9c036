import type { Mismatch } from '../events/common/discrepancy-observed.ts'
import type { Violation } from '../violations.ts'
import type { PaymentRequestPhase } from './state.ts'

/** Commands the order aggregate refuses. Part of the API: the application maps them to its results (conflict, not found, invalid). */
export type OrderRejection =
  | { readonly _tag: 'OrderAlreadyExists'; readonly merchantId: string; readonly merchantOrderId: string }
  | { readonly _tag: 'InvalidOrder'; readonly violations: ReadonlyArray<Violation> }
  | { readonly _tag: 'OrderNotFound' }
  | { readonly _tag: 'PaymentAlreadyRequested'; readonly phase: PaymentRequestPhase['phase'] }
  | { readonly _tag: 'RequestDoesNotMatchOrder'; readonly mismatches: ReadonlyArray<Mismatch> }
  | { readonly _tag: 'NoPaymentRequestPending'; readonly phase: PaymentRequestPhase['phase'] }
  /** A gateway message with a value its codec should have refused (an amount that is not one). */
  | { readonly _tag: 'MalformedGatewayMessage'; readonly violations: ReadonlyArray<Violation> }
