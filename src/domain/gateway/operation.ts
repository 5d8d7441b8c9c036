import type * as t from 'io-ts'

/**
 * How satang may repeat an operation when its outcome is unknown:
 * - `create`: never re-sent blindly; an unknown outcome is resolved by a query (ARCHITECTURE.md);
 * - `query`: safe to retry with backoff;
 * - `command`: changes gateway state (subscription update/cancel); not retried automatically.
 */
export type RetryClass = 'create' | 'query' | 'command'

/**
 * One gateway operation: its HTTP method on `{base_url}/gateway`, how it may be retried, the request
 * codec (domain value ↔ the wire fields that are signed and sent) and the codec of the envelope's
 * `data` (`null` when the response carries no `data`, as subscription cancel).
 */
export type GatewayOperation<Req, Res> = {
  readonly name: string
  readonly httpMethod: 'POST' | 'GET'
  readonly retry: RetryClass
  readonly request: t.Type<Req, Readonly<Record<string, unknown>>, unknown>
  readonly response: t.Type<Res, unknown, unknown> | null
}
