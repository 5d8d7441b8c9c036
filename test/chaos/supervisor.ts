import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { SATANG_BIN } from '../support/cli.ts'

/**
 * A process manager for the chaos run, as systemd or Kubernetes would be in production: it starts a
 * real `satang` child process, and when that process exits without being asked to stop (the suite
 * SIGKILLed it, or it died by itself) it starts it again after `restartDelayMs`. Every incarnation's
 * stdout and stderr go to files of their own in `logDir`, which the suite greps at the end.
 */
export type Incarnation = {
  readonly number: number
  readonly pid: number
  readonly startedAt: number
  readonly stdoutFile: string
  readonly stderrFile: string
  /** Set when the suite killed it on purpose (a fault), before the signal was sent. */
  killedAt?: number
  exitedAt?: number
  exit?: { readonly code: number | null; readonly signal: NodeJS.Signals | null }
}

export type Supervised = {
  readonly name: string
  readonly incarnations: ReadonlyArray<Incarnation>
  readonly current: () => Incarnation
  readonly running: () => boolean
  /** SIGKILLs the running incarnation as a fault (the supervisor starts it again); resolves once it is gone. */
  readonly kill: () => Promise<number>
  /** Exits the suite did not cause: each is a crash. */
  readonly unplannedExits: () => ReadonlyArray<Incarnation>
  /** Every line this process wrote, all incarnations, stdout and stderr. */
  readonly output: () => string
  /** Stops it for good: SIGTERM, SIGKILL after `graceMs`; no restart. */
  readonly stop: (graceMs?: number) => Promise<void>
}

export type SuperviseOptions = {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
  readonly cwd: string
  readonly logDir: string
  readonly restartDelayMs: number
  readonly log: (line: string) => void
}

export const supervise = (opts: SuperviseOptions): Supervised => {
  const incarnations: Incarnation[] = []
  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  let stopping = false

  const startOne = (): void => {
    const number = incarnations.length + 1
    const stdoutFile = join(opts.logDir, `${opts.name}.${String(number)}.stdout.log`)
    const stderrFile = join(opts.logDir, `${opts.name}.${String(number)}.stderr.log`)
    const out: WriteStream = createWriteStream(stdoutFile)
    const err: WriteStream = createWriteStream(stderrFile)
    const c = spawn(process.execPath, [SATANG_BIN, ...opts.args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] })
    c.stdout?.pipe(out)
    c.stderr?.pipe(err)
    const inc: Incarnation = { number, pid: c.pid ?? -1, startedAt: Date.now(), stdoutFile, stderrFile }
    incarnations.push(inc)
    child = c
    exited = new Promise<void>((resolve) => {
      c.on('close', (code, signal) => {
        inc.exitedAt = Date.now()
        inc.exit = { code, signal }
        out.end()
        err.end()
        resolve()
        if (stopping) return
        if (inc.killedAt === undefined) opts.log(`${opts.name}: exited by itself (code ${String(code)}, signal ${String(signal)}); restarting`)
        void sleep(opts.restartDelayMs).then(() => {
          if (!stopping) startOne()
        })
      })
    })
  }
  startOne()

  const current = (): Incarnation => {
    const inc = incarnations.at(-1)
    if (inc === undefined) throw new Error(`${opts.name} was never started`)
    return inc
  }
  const running = (): boolean => child !== undefined && child.exitCode === null && child.signalCode === null

  return {
    name: opts.name,
    incarnations,
    current,
    running,
    kill: async () => {
      const inc = current()
      const c = child
      if (c === undefined || !running()) throw new Error(`${opts.name} is not running`)
      inc.killedAt = Date.now()
      const gone = exited
      c.kill('SIGKILL')
      await gone
      return inc.killedAt
    },
    unplannedExits: () => incarnations.filter((i) => i.exit !== undefined && i.killedAt === undefined && !(stopping && i === current())),
    output: () =>
      incarnations
        .flatMap((i) => [i.stdoutFile, i.stderrFile])
        .map((f) => readFileSync(f, 'utf8'))
        .join('\n'),
    stop: async (graceMs = 15_000) => {
      stopping = true
      const c = child
      if (c === undefined || !running()) return
      const gone = exited
      const timer = setTimeout(() => c.kill('SIGKILL'), graceMs)
      c.kill('SIGTERM')
      await gone
      clearTimeout(timer)
    },
  }
}

/** Waits until `GET url` answers 200; the time it took, or null after `timeoutMs`. */
export const until200 = async (url: string, timeoutMs: number, everyMs = 100): Promise<number | null> => {
  const from = Date.now()
  for (;;) {
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      async (r) => {
        await r.arrayBuffer()
        return r.status === 200
      },
      () => false,
    )
    if (ok) return Date.now() - from
    if (Date.now() - from > timeoutMs) return null
    await sleep(everyMs)
  }
}
