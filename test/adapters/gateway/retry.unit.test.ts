import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { retryAfterMsOf } from '../../../src/adapters/gateway/response.ts'
import { backoffCeilingMs, backoffDelayMs, MAX_RETRY_AFTER_MS, retrying, retryPolicyProblems, type RetryPolicy } from '../../../src/adapters/gateway/retry.ts'

const policy: RetryPolicy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000 }

describe('backoffCeilingMs', () => {
  it('doubles from the base delay and stops at the maximum', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffCeilingMs(policy, n))).toEqual([100, 200, 400, 800, 1000, 1000])
  })

  it('stays finite for huge attempt numbers and a zero base', () => {
    expect(backoffCeilingMs(policy, 10_000)).toBe(1000)
    expect(backoffCeilingMs({ ...policy, baseDelayMs: 0 }, 10_000)).toBe(0)
  })
})

describe('backoffDelayMs (full jitter)', () => {
  it('is 0 when random() is 0 and the ceiling when random() is just below 1', () => {
    expect(backoffDelayMs(policy, 3, () => 0)).toBe(0)
    expect(backoffDelayMs(policy, 3, () => 0.999999)).toBe(400)
    expect(backoffDelayMs(policy, 9, () => 0.999999)).toBe(1000)
  })

  it('scales random() over [0, ceiling]', () => {
    expect(backoffDelayMs(policy, 1, () => 0.5)).toBe(50)
    expect(backoffDelayMs(policy, 2, () => 0.25)).toBe(50)
  })

  it('clamps a random source that leaves [0, 1)', () => {
    expect(backoffDelayMs(policy, 2, () => 1.5)).toBe(200)
    expect(backoffDelayMs(policy, 2, () => -3)).toBe(0)
  })

  it('is always a whole number within [0, min(max, base * 2^(n-1))]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (n, r) => {
        const d = backoffDelayMs(policy, n, () => r)
        return Number.isInteger(d) && d >= 0 && d <= Math.min(1000, 100 * 2 ** (n - 1))
      }),
    )
  })
})

describe('retryPolicyProblems', () => {
  it('accepts a sane policy and names each broken rule', () => {
    expect(retryPolicyProblems(policy)).toEqual([])
    expect(retryPolicyProblems({ maxAttempts: 0, baseDelayMs: -1, maxDelayMs: Number.NaN })).toHaveLength(3)
  })
})

type Err = { readonly retriable: boolean; readonly n: number; readonly retryAfterMs?: number }

const scripted = (outcomes: ReadonlyArray<E.Either<Err, string>>) => {
  const calls: number[] = []
  const attempt = (n: number): TE.TaskEither<Err, string> => {
    calls.push(n)
    return TE.fromEither(outcomes[n - 1] ?? E.left({ retriable: true, n }))
  }
  return { calls, attempt }
}

const recordingSleep = () => {
  const slept: number[] = []
  return { slept, sleep: (ms: number) => (slept.push(ms), Promise.resolve()) }
}

describe('retrying', () => {
  it('retries retriable failures with the jittered delays and returns the first success', async () => {
    const { calls, attempt } = scripted([E.left({ retriable: true, n: 1 }), E.left({ retriable: true, n: 2 }), E.right('done')])
    const { slept, sleep } = recordingSleep()
    const retried: Array<[number, number]> = []
    const result = await retrying(policy, { random: () => 0.5, sleep }, (e) => e.retriable, attempt, (_e, n, d) => retried.push([n, d]))()
    expect(result).toEqual(E.right('done'))
    expect(calls).toEqual([1, 2, 3])
    expect(slept).toEqual([50, 100])
    expect(retried).toEqual([
      [1, 50],
      [2, 100],
    ])
  })

  it('gives up after maxAttempts with the last error', async () => {
    const { calls, attempt } = scripted([])
    const { slept, sleep } = recordingSleep()
    const result = await retrying(policy, { random: () => 0.999999, sleep }, (e) => e.retriable, attempt)()
    expect(result).toEqual(E.left({ retriable: true, n: 5 }))
    expect(calls).toEqual([1, 2, 3, 4, 5])
    expect(slept).toEqual([100, 200, 400, 800])
  })

  it('does not retry an error that shouldRetry refuses', async () => {
    const { calls, attempt } = scripted([E.left({ retriable: false, n: 1 }), E.right('never')])
    const { slept, sleep } = recordingSleep()
    const result = await retrying(policy, { random: () => 0.5, sleep }, (e) => e.retriable, attempt)()
    expect(result).toEqual(E.left({ retriable: false, n: 1 }))
    expect(calls).toEqual([1])
    expect(slept).toEqual([])
  })

  it('runs exactly once when maxAttempts is 1', async () => {
    const { calls, attempt } = scripted([])
    const { sleep } = recordingSleep()
    await retrying({ ...policy, maxAttempts: 1 }, { random: () => 0.5, sleep }, () => true, attempt)()
    expect(calls).toEqual([1])
  })

  it('waits at least a server’s Retry-After, with the jitter on top; one beyond the cap ends the retries', async () => {
    const after = (ms: number) => ({ retriable: true, n: 0, retryAfterMs: ms })
    const { calls, attempt } = scripted([E.left(after(1000)), E.right('done')])
    const { slept, sleep } = recordingSleep()
    const result = await retrying(policy, { random: () => 0.5, sleep }, (e) => e.retriable, attempt, undefined, (e: Err) => e.retryAfterMs)()
    expect(result).toEqual(E.right('done'))
    expect(calls).toEqual([1, 2])
    expect(slept).toEqual([1050])
    const tooLong = scripted([E.left(after(MAX_RETRY_AFTER_MS + 1)), E.right('never')])
    const quiet = recordingSleep()
    expect(await retrying(policy, { random: () => 0.5, sleep: quiet.sleep }, () => true, tooLong.attempt, undefined, (e: Err) => e.retryAfterMs)()).toMatchObject({ _tag: 'Left' })
    expect(quiet.slept).toEqual([])
  })
})

describe('retryAfterMsOf', () => {
  it('reads delay-seconds and HTTP-dates; anything else is absent', () => {
    expect(retryAfterMsOf('2', 0)).toBe(2000)
    expect(retryAfterMsOf(['1'], 0)).toBe(1000)
    expect(retryAfterMsOf('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:58 GMT'))).toBe(2000)
    expect(retryAfterMsOf(undefined, 0)).toBeUndefined()
    expect(retryAfterMsOf('soon', 0)).toBeUndefined()
  })
})
