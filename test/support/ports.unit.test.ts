import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { freePortRun, takenPort } from './ports.ts'

describe('freePortRun (ports for scripts/kafka.sh, which derives two from the first)', () => {
  it('gives a run of consecutive ports below the ephemeral range, each of which a listener can take', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    for (let i = 0; i < 5; i++) {
      const port = await freePortRun(3)
      expect(port).toBeGreaterThanOrEqual(1_024)
      expect(port + 2).toBeLessThan(low)
      const taken = await Promise.all([port, port + 1, port + 2].map((p) => takenPort(p)))
      expect(taken.map((t) => t.port)).toEqual([port, port + 1, port + 2])
      await Promise.all(taken.map((t) => t.release()))
    }
  })
})
