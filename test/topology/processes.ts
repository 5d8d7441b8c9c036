import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startSatangProcess, type SatangProcess } from '../support/process.ts'

/**
 * The processes of a topology run, by name (`api-1`, `projector`, …): each started as a real `satang`
 * child process, killed with a real signal and started again with the same arguments and environment.
 * Every incarnation's output is kept, with when it started and how it ended.
 */
export type Incarnation = {
  readonly proc: SatangProcess
  readonly startedAt: number
  /** When the test killed it (SIGKILL), if it did. */
  killedAt?: number
}

export type StackProcess = {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
  /** The port of its HTTP service (`/healthz`, `/metrics`), when it has one. */
  readonly port?: number
  readonly incarnations: Incarnation[]
}

export type Stack = {
  readonly processes: ReadonlyMap<string, StackProcess>
  readonly start: (name: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, port?: number) => StackProcess
  /** The incarnation running now. */
  readonly current: (name: string) => Incarnation
  /** SIGKILL, as a crash or the OOM killer would; resolves once the process is gone. */
  readonly kill: (name: string) => Promise<number>
  /** Starts the process again with the same arguments and environment. */
  readonly restart: (name: string) => Incarnation
  /** Waits until `GET /healthz` answers 200; resolves with the time it took from the call. */
  readonly healthy: (name: string, timeoutMs?: number) => Promise<number>
  /** Stops every running process (SIGTERM, then SIGKILL after `graceMs`). */
  readonly stopAll: (graceMs?: number) => Promise<void>
}

const isRunning = (p: SatangProcess): boolean => p.child.exitCode === null && p.child.signalCode === null

export const makeStack = (): Stack => {
  const processes = new Map<string, StackProcess>()
  const cwd = mkdtempSync(join(tmpdir(), 'satang-topology-cwd-'))
  const spawnOf = (p: StackProcess): Incarnation => {
    const inc: Incarnation = { proc: startSatangProcess(p.args, { env: p.env, cwd }), startedAt: Date.now() }
    p.incarnations.push(inc)
    return inc
  }
  const get = (name: string): StackProcess => {
    const p = processes.get(name)
    if (p === undefined) throw new Error(`no process ${name} in the stack`)
    return p
  }
  const current = (name: string): Incarnation => {
    const inc = get(name).incarnations.at(-1)
    if (inc === undefined) throw new Error(`${name} was never started`)
    return inc
  }
  return {
    processes,
    start: (name, args, env, port) => {
      const p: StackProcess = { name, args, env, ...(port === undefined ? {} : { port }), incarnations: [] }
      processes.set(name, p)
      spawnOf(p)
      return p
    },
    current,
    kill: async (name) => {
      const inc = current(name)
      inc.killedAt = Date.now()
      await inc.proc.stop('SIGKILL')
      return inc.killedAt
    },
    restart: (name) => {
      if (isRunning(current(name).proc)) throw new Error(`${name} is still running`)
      return spawnOf(get(name))
    },
    healthy: async (name, timeoutMs = 90_000) => {
      const p = get(name)
      if (p.port === undefined) throw new Error(`${name} has no HTTP port`)
      const from = Date.now()
      for (;;) {
        const inc = current(name)
        if (!isRunning(inc.proc)) throw new Error(`${name} exited (${String(inc.proc.child.exitCode ?? inc.proc.child.signalCode)}) before it was healthy\nstdout:\n${inc.proc.stdout()}\nstderr:\n${inc.proc.stderr().slice(-4000)}`)
        const ok = await fetch(`http://127.0.0.1:${String(p.port)}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
          (r) => r.status === 200,
          () => false,
        )
        if (ok) return Date.now() - from
        if (Date.now() - from > timeoutMs) throw new Error(`${name} was not healthy within ${String(timeoutMs)} ms\nstdout:\n${inc.proc.stdout()}\nstderr:\n${inc.proc.stderr().slice(-4000)}`)
        await sleep(100)
      }
    },
    stopAll: async (graceMs = 10_000) => {
      const running = [...processes.values()].map((p) => p.incarnations.at(-1)).filter((i): i is Incarnation => i !== undefined && isRunning(i.proc))
      await Promise.all(
        running.map(async (i) => {
          const timer = setTimeout(() => i.proc.child.kill('SIGKILL'), graceMs)
          await i.proc.stop('SIGTERM')
          clearTimeout(timer)
        }),
      )
    },
  }
}
