import type { WireFields } from './errors.ts'

/** A successful gateway call. */
export type GatewayResult<Res> = {
  /** The envelope's `data`, decoded with the operation's response codec (`null` when it has none). */
  readonly data: Res
  readonly message: string
  readonly traceId: string
  /** The wire fields exactly as signed and sent (the signature itself is not included). */
  readonly request: WireFields
  readonly httpStatus: number
  readonly timing: {
    readonly startedAt: string
    /** From the first attempt's start to the last answer, backoff included. */
    readonly durationMs: number
    readonly attempts: number
  }
}
