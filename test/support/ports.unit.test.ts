import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { describe, expect, it } from 'vitest'
import { freePortRun } from './ports.ts'

const listen = (port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve(server))
  })

describe('freePortRun (ports for scripts/kafka.sh, which derives two from the first)', () => {
  it('gives a run of consecutive ports below the ephemeral range, each of which a listener can take', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    for (let i = 0; i < 5; i++) {
      const port = await freePortRun(3)
      expect(port).toBeGreaterThanOrEqual(1_024)
      expect(port + 2).toBeLessThan(low)
      const servers = await Promise.all([port, port + 1, port + 2].map(listen))
      await Promise.all(servers.map((s) => new Promise<void>((done) => s.close(() => done()))))
    }
  })
})
