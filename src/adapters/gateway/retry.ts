import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'

/** How often, and how patiently, a retriable call is repeated. `maxAttempts` counts the first try. */
export type RetryPolicy = {
  readonly maxAttempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
}

export type RetryDeps = {
  /** Uniform in [0, 1), as `Math.random`. Injected so tests can pin the jitter. */
  readonly random: () => number
  readonly sleep: (ms: number) => Promise<void>
}

/** Every rule `policy` breaks; empty when it is usable. */
export const retryPolicyProblems = (policy: RetryPolicy): ReadonlyArray<string> => {
  const problems: string[] = []
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) problems.push('maxAttempts must be an integer >= 1')
  if (!Number.isFinite(policy.baseDelayMs) || policy.baseDelayMs < 0) problems.push('baseDelayMs must be a finite number >= 0')
  if (!Number.isFinite(policy.maxDelayMs) || policy.maxDelayMs < policy.baseDelayMs) problems.push('maxDelayMs must be finite and >= baseDelayMs')
  return problems
}

// 2^52 * baseDelayMs already exceeds any sane maxDelayMs; capping the exponent keeps the product finite.
const MAX_EXPONENT = 52

/** The upper bound of the wait after failed attempt `failedAttempt` (1-based): `min(max, base * 2^(n-1))`. */
export const backoffCeilingMs = (policy: RetryPolicy, failedAttempt: number): number =>
  Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(Math.max(failedAttempt - 1, 0), MAX_EXPONENT))

/**
 * Capped exponential backoff with "full jitter": a whole number of ms uniform in [0, ceiling]. Full jitter
 * spreads clients that failed together (a gateway blip) instead of having them retry in lock-step.
 */
export const backoffDelayMs = (policy: RetryPolicy, failedAttempt: number, random: () => number): number => {
  const ceiling = backoffCeilingMs(policy, failedAttempt)
  const r = Math.min(Math.max(random(), 0), 1)
  return Math.min(Math.floor(r * (ceiling + 1)), ceiling)
}

/** The longest `Retry-After` a retry waits for; a server asking for more gets the error back instead. */
export const MAX_RETRY_AFTER_MS = 60_000

/**
 * Runs `attempt(1)`, and while it fails with an error that `shouldRetry` accepts and attempts remain,
 * sleeps the backoff delay and runs the next attempt. The last error is returned as it is. When the
 * error carries a server's `Retry-After` (`retryAfterOf`), the wait is at least that long (jitter on
 * top spreads the callers the server turned away together); one longer than `MAX_RETRY_AFTER_MS` ends
 * the retries.
 */
export const retrying = <E, A>(
  policy: RetryPolicy,
  deps: RetryDeps,
  shouldRetry: (error: E, attempt: number) => boolean,
  attempt: (n: number) => TE.TaskEither<E, A>,
  onRetry?: (error: E, attempt: number, delayMs: number) => void,
  retryAfterOf: (error: E) => number | undefined = () => undefined,
): TE.TaskEither<E, A> => {
  const run = (n: number): TE.TaskEither<E, A> =>
    pipe(
      attempt(n),
      TE.orElse((error) => {
        if (n >= policy.maxAttempts || !shouldRetry(error, n)) return TE.left(error)
        const retryAfter = retryAfterOf(error)
        if (retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_MS) return TE.left(error)
        const backoff = backoffDelayMs(policy, n, deps.random)
        const delayMs = retryAfter === undefined ? backoff : retryAfter + backoff
        onRetry?.(error, n, delayMs)
        return pipe(
          TE.fromTask(() => deps.sleep(delayMs)),
          TE.flatMap(() => run(n + 1)),
        )
      }),
    )
  return run(1)
}
