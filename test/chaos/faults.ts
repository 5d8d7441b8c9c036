import { execFileSync } from 'node:child_process'
import { chownSync, closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Pool } from 'pg'
import { embeddedPostgresPid, type Stack } from './stack.ts'
import { request, type Traffic } from './traffic.ts'

/**
 * The faults that take something away from satang, one at a time, each followed by a wait until satang
 * works again: `/healthz` answers 200 and a new payment is created and accepted by the gateway (201).
 * Time to recover runs from the moment the fault's cause is gone (a killed process at once; a faulty
 * gateway or a full disk when the suite lifts the fault) to that first accepted payment.
 */
export const SERVER_FAULTS = ['satang-sigkill', 'postgres-kill', 'gateway-5xx', 'gateway-timeout', 'disk-full'] as const
export type ServerFault = (typeof SERVER_FAULTS)[number]

export type FaultRun = {
  readonly kind: ServerFault
  readonly detail: string
  readonly injectedAt: number
  /** When the cause was lifted. */
  readonly clearedAt: number
  /** null: not recovered within the limit. */
  readonly recoveredAt: number | null
  readonly ttrMs: number | null
}

export type FaultDeps = {
  readonly stack: Stack
  readonly traffic: Traffic
  /** Creates a payment; its answer's status. */
  readonly create: (moid: string) => Promise<number>
  readonly tag: string
  readonly log: (line: string) => void
  readonly recoveryLimitMs: number
}

let probes = 0

/** Waits until satang is healthy and accepts a new payment at the gateway; the moment it did, or null. */
const recovered = async (d: FaultDeps): Promise<number | null> => {
  const from = Date.now()
  while (Date.now() - from < d.recoveryLimitMs) {
    const health = await request(d.traffic, 'GET /healthz', `${d.stack.satangUrl}/healthz`, { method: 'GET', timeoutMs: 2_000 })
    if (health.status === 200) {
      probes += 1
      // one attempt per probe id: an unknown outcome (202) is not recovery, and is resolved on its own
      const status = await d.create(`CH-${d.tag}-probe-${String(probes)}`)
      if (status === 201) return Date.now()
    }
    await sleep(200)
  }
  return null
}

const sandboxFaults = (d: FaultDeps, body: unknown): Promise<unknown> =>
  request(d.traffic, 'sandbox control', `${d.stack.sandboxUrl}/_sandbox/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((a) => {
    if (a.status !== 200) throw new Error(`the sandbox refused the fault ${JSON.stringify(body)}: ${String(a.status)} ${a.text}`)
    return a.json
  })

/** Waits until the sandbox has used up the armed gateway fault (or `limitMs` passed, then disarms it). */
const gatewayFaultSpent = async (d: FaultDeps, which: 'http5xx' | 'hang', limitMs: number): Promise<void> => {
  const from = Date.now()
  for (;;) {
    const a = await request(d.traffic, 'sandbox control', `${d.stack.sandboxUrl}/_sandbox/faults`, { method: 'GET' })
    const left = (a.json as { gateway?: Record<string, { count?: number }> } | null)?.gateway?.[which]?.count
    if (left === 0) return
    if (Date.now() - from > limitMs) {
      await sandboxFaults(d, { gateway: { [which]: { count: 0 } } })
      return
    }
    await sleep(100)
  }
}

/**
 * A tablespace on a small tmpfs holding the event table, for the disk-full fault. Needs root (to mount)
 * and a superuser connection (to create the tablespace); else the fault is skipped with the reason.
 */
export type DiskFullSetup = { readonly ok: true; readonly dir: string; readonly cleanup: () => void } | { readonly ok: false; readonly reason: string }

const describe = (e: unknown): string => (e instanceof Error ? e.message.split('\n')[0] ?? e.message : String(e))

export const prepareDiskFull = async (stack: Stack, pool: Pool): Promise<DiskFullSetup> => {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'needs root to mount a size-limited tmpfs for the tablespace (run as root, as CI does)' }
  const dir = join(stack.dir, 'tablespace')
  mkdirSync(dir, { recursive: true })
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m,mode=0700', 'chaos-tablespace', dir], { stdio: 'pipe' })
  } catch (e) {
    return { ok: false, reason: `could not mount a tmpfs for the tablespace (${describe(e)})` }
  }
  const cleanup = (): void => {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' })
    } catch (e) {
      process.stderr.write(`chaos: could not unmount ${dir}: ${describe(e)}\n`)
    }
  }
  try {
    // the embedded server runs as the `postgres` system user when started by root
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, gid)
    await pool.query(`create tablespace chaos_disk location '${dir.replaceAll("'", "''")}'`)
    await pool.query('alter table eventstore.events set tablespace chaos_disk')
    return { ok: true, dir, cleanup }
  } catch (e) {
    cleanup()
    return { ok: false, reason: `could not put the event table on a tablespace of its own (${describe(e)}): it needs the embedded cluster's superuser` }
  }
}

const BALLAST = 'ballast'

const isNoSpace = (e: unknown): boolean => typeof e === 'object' && e !== null && 'code' in e && e.code === 'ENOSPC'

/** Writes zeros into a ballast file until the filesystem has no byte left (the table may grow meanwhile); the bytes written. */
const fillDisk = (dir: string): number => {
  const fd = openSync(join(dir, BALLAST), 'w')
  let written = 0
  try {
    for (const chunk of [Buffer.alloc(1 << 20), Buffer.alloc(8192), Buffer.alloc(512)]) {
      for (;;) {
        try {
          written += writeSync(fd, chunk)
        } catch (e) {
          if (isNoSpace(e)) break
          throw e
        }
      }
    }
  } finally {
    closeSync(fd)
  }
  return written
}

export const injectFault = async (kind: ServerFault, d: FaultDeps, n: number, disk: DiskFullSetup): Promise<FaultRun | { readonly skipped: string }> => {
  const injectedAt = Date.now()
  let detail: string
  let clearedAt: number
  switch (kind) {
    case 'satang-sigkill': {
      const pid = d.stack.satang.current().pid
      clearedAt = await d.stack.satang.kill()
      detail = `SIGKILL satang up (pid ${String(pid)}); the supervisor starts it again`
      break
    }
    case 'postgres-kill': {
      const pid = embeddedPostgresPid(d.stack.dataDir)
      if (pid === null) return { skipped: 'no embedded PostgreSQL server found on the run\'s data folder' }
      process.kill(pid, 'SIGKILL')
      clearedAt = Date.now()
      detail = `SIGKILL the embedded PostgreSQL server (pid ${String(pid)}); satang starts it again`
      break
    }
    case 'gateway-5xx': {
      const status = [503, 500, 502, 504][n % 4] ?? 503
      const phase = n % 2 === 0 ? 'after' : 'before'
      await sandboxFaults(d, { gateway: { http5xx: { count: 6, status, phase } } })
      await gatewayFaultSpent(d, 'http5xx', 15_000)
      clearedAt = Date.now()
      detail = `the gateway answered ${String(status)} to 6 requests (${phase === 'after' ? 'after' : 'before'} processing them)`
      break
    }
    case 'gateway-timeout': {
      const phase = n % 2 === 0 ? 'after' : 'before'
      await sandboxFaults(d, { gateway: { hang: { count: 4, phase } } })
      await gatewayFaultSpent(d, 'hang', 20_000)
      clearedAt = Date.now()
      detail = `the gateway never answered 4 requests (${phase} processing them)`
      break
    }
    case 'disk-full': {
      if (!disk.ok) return { skipped: disk.reason }
      const bytes = fillDisk(disk.dir)
      // hold it while the load runs into it: appends that need a new page of the event table fail
      const from = Date.now()
      let refused = 0
      while (Date.now() - from < 4_000) {
        const before = d.traffic.routes.get('POST /v1/payments')?.statuses['503'] ?? 0
        await sleep(250)
        refused += (d.traffic.routes.get('POST /v1/payments')?.statuses['503'] ?? 0) - before
      }
      rmSync(join(disk.dir, BALLAST))
      clearedAt = Date.now()
      detail = `the event table's tablespace (tmpfs) filled (${String(Math.round(bytes / 1048576))} MiB of ballast) for 4 s: ${String(refused)} creates answered 503 meanwhile`
      break
    }
    default:
      return kind satisfies never
  }
  d.log(`fault ${kind}: ${detail}`)
  const recoveredAt = await recovered(d)
  return { kind, detail, injectedAt, clearedAt, recoveredAt, ttrMs: recoveredAt === null ? null : recoveredAt - clearedAt }
}
