import { describe, expect, it } from 'vitest'
import { bangkokMinutesOf, bangkokYesterdayOf, dueWork } from '../../src/jobs/scheduler.ts'

const config = { dailyAtMinutes: 30, sweepEveryMs: 300_000, tickMs: 30_000 }

describe('what the scheduler does when', () => {
  it('knows Bangkok time: 17:20 UTC is 00:20 the next day in Bangkok', () => {
    expect(bangkokMinutesOf(new Date('2026-03-01T17:20:00Z'))).toBe(20)
    expect(bangkokYesterdayOf(new Date('2026-03-01T17:20:00Z'))).toBe('2026-03-01')
  })
  it('reconciles the day before only after the configured time, and only until it is done', () => {
    expect(dueWork(new Date('2026-03-01T17:29:00Z'), config, { sweepAt: Date.now(), dailyDone: false }).daily).toBeNull()
    expect(dueWork(new Date('2026-03-01T17:30:00Z'), config, { sweepAt: Date.now(), dailyDone: false }).daily).toBe('2026-03-01')
    expect(dueWork(new Date('2026-03-02T05:00:00Z'), config, { sweepAt: Date.now(), dailyDone: true }).daily).toBeNull()
  })
  it('sweeps every sweepEveryMs, never when sweeps are off', () => {
    const at = new Date('2026-03-02T05:00:00Z')
    expect(dueWork(at, config, { sweepAt: null, dailyDone: true }).sweep).toBe(true)
    expect(dueWork(at, config, { sweepAt: at.getTime() - 299_000, dailyDone: true }).sweep).toBe(false)
    expect(dueWork(at, config, { sweepAt: at.getTime() - 300_000, dailyDone: true }).sweep).toBe(true)
    expect(dueWork(at, { ...config, sweepEveryMs: 0 }, { sweepAt: null, dailyDone: true }).sweep).toBe(false)
  })
})
