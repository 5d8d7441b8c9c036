import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'

/** Errors 1: a response is successful when `code` is the integer 200000 and `message` is `Success`. */
export const SUCCESS_CODE = 200000
export const SUCCESS_MESSAGE = 'Success'

export type GatewaySuccess<A> = {
  readonly _tag: 'GatewaySuccess'
  readonly code: typeof SUCCESS_CODE
  readonly message: typeof SUCCESS_MESSAGE
  readonly trace_id: string
  readonly data: A
}

/**
 * Any other `code` is a gateway error carrying `code`, `message`, `trace_id` (ARCHITECTURE.md; error
 * codes and the error shape are "not shown", so an error's `data`, if any, is kept undecoded).
 */
export type GatewayError = {
  readonly _tag: 'GatewayError'
  readonly code: number
  readonly message: string
  readonly trace_id: string
  readonly data?: unknown
}

export type GatewayReply<A> = GatewaySuccess<A> | GatewayError

/** The common response envelope as it is on the wire. */
export type EnvelopeWire = { readonly code: number; readonly message: string; readonly trace_id: string; readonly data?: unknown }

type DataRule<A> = { readonly decode: (data: unknown, c: t.Context) => t.Validation<A>; readonly encode: (a: A) => unknown }

const at = (c: t.Context, key: string, actual: unknown): t.Context => t.appendContext(c, key, t.unknown, actual)

const makeEnvelope = <A>(name: string, dataRule: DataRule<A>): t.Type<GatewayReply<A>, EnvelopeWire, unknown> =>
  new t.Type<GatewayReply<A>, EnvelopeWire, unknown>(
    name,
    (u): u is GatewayReply<A> => t.UnknownRecord.is(u) && (u._tag === 'GatewaySuccess' || u._tag === 'GatewayError'),
    (u, c) => {
      if (!t.UnknownRecord.is(u)) return t.failure(u, c, 'must be an object')
      const { code, message, trace_id: traceId, data } = u
      const errors: t.ValidationError[] = []
      const fail = (key: string, actual: unknown, rule: string): void => {
        errors.push({ value: actual, context: at(c, key, actual), message: rule })
      }
      if (code === undefined) fail('code', code, 'is required')
      else if (typeof code !== 'number' || !Number.isInteger(code)) fail('code', code, `must be an integer (${String(SUCCESS_CODE)} means success)`)
      if (message === undefined) fail('message', message, 'is required')
      else if (typeof message !== 'string') fail('message', message, 'must be a string')
      if (traceId === undefined) fail('trace_id', traceId, 'is required')
      else if (typeof traceId !== 'string' || traceId === '') fail('trace_id', traceId, 'must be a non-empty string')

      const success = code === SUCCESS_CODE
      if (success && typeof message === 'string' && message !== SUCCESS_MESSAGE) {
        fail('message', message, `must be ${SUCCESS_MESSAGE} when code is ${String(SUCCESS_CODE)}`)
      }
      const decodedData = success ? dataRule.decode(data, at(c, 'data', data)) : undefined
      if (decodedData !== undefined && E.isLeft(decodedData)) errors.push(...decodedData.left)

      if (errors.length > 0 || typeof code !== 'number' || typeof message !== 'string' || typeof traceId !== 'string') return t.failures(errors)
      if (decodedData !== undefined && E.isRight(decodedData)) {
        return t.success({ _tag: 'GatewaySuccess', code: SUCCESS_CODE, message: SUCCESS_MESSAGE, trace_id: traceId, data: decodedData.right })
      }
      return t.success({ _tag: 'GatewayError', code, message, trace_id: traceId, ...(data === undefined ? {} : { data }) })
    },
    (reply) => {
      if (reply._tag === 'GatewayError') {
        return { code: reply.code, message: reply.message, trace_id: reply.trace_id, ...(reply.data === undefined ? {} : { data: reply.data }) }
      }
      const data = dataRule.encode(reply.data)
      return { code: reply.code, message: reply.message, trace_id: reply.trace_id, ...(data === undefined ? {} : { data }) }
    },
  )

/** The common response envelope whose `data` (required on success) is decoded with `data`. */
export const Envelope = <A, O>(data: t.Type<A, O, unknown>): t.Type<GatewayReply<A>, EnvelopeWire, unknown> =>
  makeEnvelope(`Envelope<${data.name}>`, { decode: (u, c) => data.validate(u, c), encode: (a) => data.encode(a) })

const noData = <A>(): DataRule<A | null> => ({
  decode: (u, c) => (u === undefined || u === null ? t.success(null) : t.failure(u, c, 'must be absent in this response')),
  encode: () => undefined,
})

/** The envelope of subscription cancel: "no `data`" (absent or null); a success carries `data: null`. */
export const EmptyEnvelope: t.Type<GatewayReply<null>, EnvelopeWire, unknown> = makeEnvelope('Envelope<none>', noData<null>())

/** The envelope of an operation's response (`GatewayOperation.response`): no `data` when that codec is `null`. */
export const envelopeOf = <A>(data: t.Type<A, unknown, unknown> | null): t.Type<GatewayReply<A | null>, EnvelopeWire, unknown> =>
  data === null
    ? makeEnvelope('Envelope<none>', noData<A>())
    : makeEnvelope<A | null>(`Envelope<${data.name}>`, { decode: (u, c) => data.validate(u, c), encode: (a) => (a === null ? undefined : data.encode(a)) })

export const isGatewaySuccess = <A>(reply: GatewayReply<A>): reply is GatewaySuccess<A> => reply._tag === 'GatewaySuccess'
