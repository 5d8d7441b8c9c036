import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/**
 * A TCP port on 127.0.0.1 held by a listener until `release` (to test what happens when a port is
 * taken): `port`, or one the OS picks (0).
 */
export const takenPort = (port = 0): Promise<{ readonly port: number; readonly release: () => Promise<void> }> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      const release = (): Promise<void> => new Promise((closed) => server.close(() => closed()))
      if (port > 0) resolve({ port, release })
      else void release().then(() => reject(new Error('no port assigned')))
    })
  })

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export const freePort = async (): Promise<number> => {
  const taken = await takenPort()
  await taken.release()
  return taken.port
}

/** Whether a listener can be opened on 127.0.0.1:`port` now (it is closed again at once). */
const bindable = (port: number): Promise<boolean> =>
  takenPort(port).then(
    async (taken) => {
      await taken.release()
      return true
    },
    () => false,
  )

/**
 * `count` consecutive TCP ports on 127.0.0.1, free a moment ago, for a program that derives ports from
 * the first (scripts/kafka.sh: the broker's, then the controller's and the secure listener's). They are
 * taken below the kernel's range of ephemeral ports: there, a port next to a free one is often the
 * local end of some connection (the tests' own to PostgreSQL), which no listener can bind.
 */
export const freePortRun = async (count: number): Promise<number> => {
  let low = 32_768
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    if (Number.isSafeInteger(first) && first > 2_000) low = first
  } catch {
    // Not Linux: the usual start of the range.
  }
  const from = Math.max(1_024, low - 12_000)
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = from + Math.floor(Math.random() * (low - count - from))
    let all = true
    for (let k = 0; k < count && all; k++) all = await bindable(port + k)
    if (all) return port
  }
  throw new Error(`no run of ${String(count)} free ports found below ${String(low)}`)
}
