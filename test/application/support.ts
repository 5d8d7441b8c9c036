import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { eventIdOf } from '../../src/application/event-id.ts'
import type { GatewayError } from '../../src/application/ports/gateway.ts'
import type { GatewayResult } from '../../src/application/ports/gateway.ts'
import { makeSigner, signedForm } from '../../src/domain/gateway/signing.ts'
import type { CrashPoint, GatewayPort, RecordingDeps } from '../../src/application/deps.ts'
import type { RecordedEvent } from '../../src/application/ports/event-store.ts'
import type { StreamLocks } from '../../src/application/ports/job-lock.ts'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { DEFAULT_PAYMENT_STATUS_TABLE, DEFAULT_REFUND_STATUS_TABLE } from '../../src/domain/gateway/statuses.ts'
import { silentLogger } from '../../src/logger.ts'
import { gatewayPrivateKey, gatewayVerifier, MERCHANT_ID } from '../sandbox/support.ts'
import type { MemoryEventStore } from './memory-event-store.ts'

export { MERCHANT_ID }

/** Signs as the gateway does (the signing vectors' gateway key). */
export const gatewaySigner = makeSigner(satangCanonicalV1, gatewayPrivateKey)
export const signedByGateway = <F extends Readonly<Record<string, unknown>>>(fields: F): F & { sign_type: string; sign: string } => signedForm(gatewaySigner, fields)

export const CALLBACKS = {
  notify: 'https://satang.test/callbacks/notifications',
  checkoutRedirect: 'https://satang.test/callbacks/checkout-redirect',
  subscriptionRedirect: 'https://satang.test/callbacks/subscription-redirect',
} as const

type Method = keyof GatewayPort
type Answer = E.Either<GatewayError, unknown>

/** A scripted gateway: each method answers from its queue (the last answer repeats); every call is kept. */
export type FakeGateway = GatewayPort & {
  readonly calls: Array<{ readonly method: Method; readonly request: Readonly<Record<string, unknown>> }>
  readonly answer: (method: Method, ...answers: ReadonlyArray<Answer>) => void
  /** Runs before each call answers (e.g. to look at the store while the request is "in flight"). */
  readonly onCall: (f: (method: Method, request: Readonly<Record<string, unknown>>) => Promise<void> | void) => void
  readonly count: (method: Method) => number
}

const result = <Res>(data: Res, request: Readonly<Record<string, unknown>>, traceId: string): GatewayResult<Res> => ({
  data,
  message: 'Success',
  traceId,
  request,
  httpStatus: 200,
  timing: { startedAt: '2026-11-21T03:00:00.000Z', durationMs: 1, attempts: 1 },
})

export const makeFakeGateway = (): FakeGateway => {
  const calls: FakeGateway['calls'] = []
  const queues = new Map<Method, Answer[]>()
  let hook: (method: Method, request: Readonly<Record<string, unknown>>) => Promise<void> | void = () => undefined
  let n = 0
  const call =
    <Res>(method: Method) =>
    (request: Readonly<Record<string, unknown>>): TE.TaskEither<GatewayError, GatewayResult<Res>> =>
    async () => {
      calls.push({ method, request })
      await hook(method, request)
      const queue = queues.get(method) ?? []
      const next = queue.length > 1 ? queue.shift() : queue[0]
      if (next === undefined) throw new Error(`fake gateway: no answer scripted for ${method}`)
      n += 1
      // The scripted data stands for what the client decoded with the operation's response codec.
      return E.map((data: unknown) => result(data as Res, request, `trace-${String(n)}`))(next)
    }
  return {
    calls,
    answer: (method, ...answers) => {
      queues.set(method, [...answers])
    },
    onCall: (f) => {
      hook = f
    },
    count: (method) => calls.filter((c) => c.method === method).length,
    createDirectPayment: call('createDirectPayment'),
    applyCheckout: call('applyCheckout'),
    queryPayment: call('queryPayment'),
    queryRefund: call('queryRefund'),
    createSubscription: call('createSubscription'),
    updateSubscription: call('updateSubscription'),
    cancelSubscription: call('cancelSubscription'),
  }
}

export const rejected = (code: number, message = 'rejected'): Answer => E.left({ _tag: 'GatewayRejected', operation: 'x', code, message, traceId: `trace-${String(code)}`, httpStatus: code === 404001 ? 404 : 400, retriable: false })
export const timedOut = (request: Readonly<Record<string, unknown>> = {}): Answer =>
  E.left({
    _tag: 'OutcomeUnknown',
    operation: 'x',
    service: 'x',
    reason: 'timeout',
    request,
    retriable: false,
    cause: { _tag: 'TransportFailed', operation: 'x', reason: 'timeout', sent: true, retriable: true },
  })
export const refused = (): Answer => E.left({ _tag: 'TransportFailed', operation: 'x', reason: 'refused', sent: false, retriable: true })

/** A clock the test moves. */
export type TestClock = { readonly now: () => Date; readonly advance: (ms: number) => void }
export const makeClock = (start = '2026-11-21T03:00:00.000Z'): TestClock => {
  let t = new Date(start).getTime()
  return { now: () => new Date(t), advance: (ms) => (t += ms) }
}

/** Stream locks of one database, in memory (unit tests; the PostgreSQL ones are tested in test/application/resolution-processes.int.test.ts). */
export const makeMemoryStreamLocks = (): StreamLocks & { readonly held: ReadonlySet<string> } => {
  const held = new Set<string>()
  return {
    held,
    tryLock: (stream) => async () => {
      if (held.has(stream)) return E.right(null)
      held.add(stream)
      let released = false
      return E.right({
        release: async () => {
          if (!released) held.delete(stream)
          released = true
        },
      })
    },
  }
}

export const testDeps = (store: MemoryEventStore, gateway: GatewayPort, over: Partial<RecordingDeps> = {}): RecordingDeps & { readonly crashes: CrashPoint[] } => {
  const crashes: CrashPoint[] = []
  let id = 0
  // Waiting moves the clock, as it would in real time.
  const clock = makeClock()
  return {
    store,
    gateway,
    gatewayVerifier,
    merchantId: MERCHANT_ID,
    callbackUrls: () => CALLBACKS,
    statusTables: { payment: DEFAULT_PAYMENT_STATUS_TABLE, refund: DEFAULT_REFUND_STATUS_TABLE },
    now: clock.now,
    newId: () => `id-${String(++id)}`,
    sleep: async (ms) => {
      clock.advance(ms)
    },
    log: silentLogger(),
    resolve: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1, notFoundAfterMs: 1000, notFoundCodes: [404001] },
    crashPoint: (p) => {
      crashes.push(p)
    },
    stopping: new AbortController().signal,
    streamLocks: makeMemoryStreamLocks(),
    crashes,
    ...over,
  }
}

/** The types of a stream's events, in order. */
export const typesOf = (store: MemoryEventStore, stream: string): ReadonlyArray<string> => store.all().filter((e) => e.streamName === stream).map((e) => e.type)
export const eventsOf = (store: MemoryEventStore, stream: string): ReadonlyArray<RecordedEvent> => store.all().filter((e) => e.streamName === stream)

export const cause = { correlationId: 'req-1', causationId: 'req-1', actor: 'shop' }
export { eventIdOf }
