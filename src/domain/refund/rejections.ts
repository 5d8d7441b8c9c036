/** Commands the refund aggregate refuses. */
export type RefundRejection =
  | { readonly _tag: 'RefundTrackedForAnotherOrder'; readonly merchantOrderId: string }
  | { readonly _tag: 'MalformedGatewayMessage'; readonly violations: ReadonlyArray<{ readonly path: string; readonly rule: string }> }
