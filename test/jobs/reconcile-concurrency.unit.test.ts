import { describe, expect, it } from 'vitest'
import { callsAtOnce, forEachConcurrently } from '../../src/jobs/reconcile/concurrency.ts'

/** A call that ends when told to, counting the calls under way at once. */
const gate = () => {
  let under = 0
  let most = 0
  const started: number[] = []
  const release = new Map<number, () => void>()
  return {
    call: (n: number) => async (): Promise<number> => {
      under += 1
      most = Math.max(most, under)
      started.push(n)
      await new Promise<void>((resolve) => release.set(n, resolve))
      under -= 1
      return n
    },
    end: (n: number): void => release.get(n)?.(),
    started,
    most: () => most,
    under: () => under,
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe('callsAtOnce (the gateway queries of a reconciliation run)', () => {
  it('lets `limit` calls run at once; the next one starts when one ends, in the order they were made', async () => {
    const g = gate()
    const at = callsAtOnce(2)
    const results = [1, 2, 3, 4].map((n) => at(g.call(n)))
    await settle()
    expect(g.started).toEqual([1, 2])
    g.end(2)
    await settle()
    expect(g.started).toEqual([1, 2, 3])
    g.end(1)
    await settle()
    expect(g.started).toEqual([1, 2, 3, 4])
    g.end(3)
    g.end(4)
    expect(await Promise.all(results)).toEqual([1, 2, 3, 4])
    expect(g.most()).toBe(2)
  })

  it('a call that fails gives its place to the next, and its failure to its caller', async () => {
    const at = callsAtOnce(1)
    const failed = at(() => Promise.reject(new Error('no answer')))
    const next = at(() => Promise.resolve('answered'))
    await expect(failed).rejects.toThrow('no answer')
    expect(await next).toBe('answered')
    // The place is free again: a call made now runs at once.
    let ran = false
    await at(async () => {
      ran = true
      return Promise.resolve()
    })
    expect(ran).toBe(true)
  })

  it('after every call has ended, `limit` calls run at once again (no place is lost or gained)', async () => {
    const at = callsAtOnce(3)
    const first = gate()
    const one = [1, 2, 3, 4, 5].map((n) => at(first.call(n)))
    await settle()
    for (const n of [1, 2, 3, 4, 5]) {
      first.end(n)
      await settle()
    }
    await Promise.all(one)
    const second = gate()
    const two = [6, 7, 8, 9].map((n) => at(second.call(n)))
    await settle()
    expect(second.started).toEqual([6, 7, 8])
    for (const n of [6, 7, 8, 9]) {
      second.end(n)
      await settle()
    }
    await Promise.all(two)
    expect(first.most()).toBe(3)
    expect(second.most()).toBe(3)
  })
})

describe('forEachConcurrently', () => {
  it('has at most `limit` items under way and works through all of them', async () => {
    const g = gate()
    const done = forEachConcurrently([1, 2, 3, 4, 5], 2, async (n) => {
      await g.call(n)()
    }, () => false)
    for (const n of [1, 2, 3, 4, 5]) {
      await settle()
      g.end(n)
    }
    await done
    expect(g.started).toEqual([1, 2, 3, 4, 5])
    expect(g.most()).toBe(2)
  })
})
