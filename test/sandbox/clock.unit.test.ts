import { describe, expect, it } from 'vitest'
import { makeSandboxClock } from '../../src/sandbox/clock.ts'

/** A hand-driven "real" clock. */
const fakeReal = (startMs: number) => {
  let ms = startMs
  return { realNow: () => ms, pass: (d: number) => (ms += d) }
}
const REAL_START = Date.parse('2026-01-01T00:00:00.000Z')

describe('sandbox clock', () => {
  it('follows real time with no offset by default', () => {
    const real = fakeReal(REAL_START)
    const clock = makeSandboxClock({ realNow: real.realNow })
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:00.000Z')
    real.pass(1500)
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:01.500Z')
    expect(clock.offsetMs()).toBe(0)
  })

  it('starts at a given instant and keeps passing real time from there', () => {
    const real = fakeReal(REAL_START)
    const clock = makeSandboxClock({ start: new Date('2026-01-31T03:00:00.000Z'), realNow: real.realNow })
    real.pass(250)
    expect(clock.now().toISOString()).toBe('2026-01-31T03:00:00.250Z')
    expect(clock.offsetMs()).toBe(30 * 24 * 3600 * 1000 + 3 * 3600 * 1000)
  })

  it('advance adds to the offset, then awaits every listener in registration order with the new time', async () => {
    const real = fakeReal(REAL_START)
    const clock = makeSandboxClock({ realNow: real.realNow })
    const seen: string[] = []
    clock.onAdvance(async (now) => {
      await new Promise((r) => setTimeout(r, 5))
      seen.push(`a ${now.toISOString()}`)
    })
    clock.onAdvance(async (now) => {
      seen.push(`b ${now.toISOString()}`)
    })
    await clock.advance(24 * 3600 * 1000)
    expect(seen).toEqual(['a 2026-01-02T00:00:00.000Z', 'b 2026-01-02T00:00:00.000Z'])
    expect(clock.offsetMs()).toBe(24 * 3600 * 1000)
  })

  it('unsubscribing stops a listener; each registration is removed on its own', async () => {
    const clock = makeSandboxClock({ realNow: fakeReal(REAL_START).realNow })
    let calls = 0
    const listener = async (): Promise<void> => {
      calls += 1
    }
    const off1 = clock.onAdvance(listener)
    clock.onAdvance(listener)
    await clock.advance(1)
    off1()
    off1()
    await clock.advance(1)
    expect(calls).toBe(3)
  })

  it('set moves forward to an instant and runs the listeners', async () => {
    const real = fakeReal(REAL_START)
    const clock = makeSandboxClock({ realNow: real.realNow })
    const seen: string[] = []
    clock.onAdvance(async (now) => {
      seen.push(now.toISOString())
    })
    await clock.set(new Date('2026-03-01T00:00:00.000Z'))
    expect(clock.now().toISOString()).toBe('2026-03-01T00:00:00.000Z')
    expect(seen).toEqual(['2026-03-01T00:00:00.000Z'])
  })

  it('refuses to go back in time, and says so', async () => {
    const clock = makeSandboxClock({ realNow: fakeReal(REAL_START).realNow })
    await expect(clock.set(new Date('2025-12-31T00:00:00.000Z'))).rejects.toThrow(
      'sandbox clock: cannot go back in time to 2025-12-31T00:00:00.000Z; sandbox time is already 2026-01-01T00:00:00.000Z',
    )
    await expect(clock.advance(-1)).rejects.toThrow('advance takes a finite number of milliseconds of at least 0, got -1')
    await expect(clock.advance(Number.NaN)).rejects.toThrow(RangeError)
    expect(clock.offsetMs()).toBe(0)
  })

  it('runs overlapping moves one after another, never interleaving listeners', async () => {
    const clock = makeSandboxClock({ realNow: fakeReal(REAL_START).realNow })
    const log: string[] = []
    clock.onAdvance(async (now) => {
      log.push(`start ${now.toISOString()}`)
      await new Promise((r) => setTimeout(r, 5))
      log.push(`end ${now.toISOString()}`)
    })
    await Promise.all([clock.advance(1000), clock.advance(1000)])
    expect(log).toEqual(['start 2026-01-01T00:00:01.000Z', 'end 2026-01-01T00:00:01.000Z', 'start 2026-01-01T00:00:02.000Z', 'end 2026-01-01T00:00:02.000Z'])
  })

  it('a failing listener fails the move, the others still run, and later moves still work', async () => {
    const clock = makeSandboxClock({ realNow: fakeReal(REAL_START).realNow })
    let after = 0
    clock.onAdvance(async () => {
      throw new Error('engine broke')
    })
    clock.onAdvance(async () => {
      after += 1
    })
    await expect(clock.advance(10)).rejects.toThrow('engine broke')
    expect(after).toBe(1)
    expect(clock.offsetMs()).toBe(10)
    await expect(clock.advance(10)).rejects.toThrow('engine broke')
    expect(after).toBe(2)
  })

  it('a listener that moves the clock gets a clear error instead of a deadlock', async () => {
    const clock = makeSandboxClock({ realNow: fakeReal(REAL_START).realNow })
    clock.onAdvance(() => clock.advance(1))
    await expect(clock.advance(1)).rejects.toThrow('advance was called from inside an onAdvance listener')
  })
})
