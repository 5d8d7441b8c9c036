import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { SATANG_BIN, testUpArgs } from './cli.ts'
import { pgQueuedQuery } from './pg-queued-query.ts'

/**
 * The test process's environment without any `SATANG_*` setting (a developer's shell must not leak into
 * a test's configuration), plus `extra`.
 */
export const envWithoutSatangSettings = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SATANG_')) env[k] = v
  return { ...env, ...extra }
}

/** A long-running `satang` child process whose output the test can wait on. */
export type SatangProcess = {
  readonly child: ChildProcessWithoutNullStreams
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves when stdout matches; rejects on exit or after `timeoutMs`, with the output so far. */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpExecArray>
  /** Sends the signal and resolves with the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

export const startSatangProcess = (args: ReadonlyArray<string>, opts: { env?: NodeJS.ProcessEnv; cwd?: string; allowSuperuser?: boolean } = {}): SatangProcess => {
  const child = spawn(process.execPath, [SATANG_BIN, ...testUpArgs(args, { ...process.env, ...opts.env }, opts.allowSuperuser)], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor: (pattern, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const m = pattern.exec(out)
          if (m !== null) {
            cleanup()
            resolve(m)
            return true
          }
          return false
        }
        const onData = (): void => void check()
        const onExit = (code: number | null): void => {
          cleanup()
          reject(new Error(`satang exited (${String(code)}) before printing ${String(pattern)}\nstdout:\n${out}\nstderr:\n${err}`))
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`timed out waiting for ${String(pattern)}\nstdout:\n${out}\nstderr:\n${err}`))
        }, timeoutMs)
        const cleanup = (): void => {
          clearTimeout(timer)
          child.stdout.off('data', onData)
          child.off('exit', onExit)
        }
        child.stdout.on('data', onData)
        child.on('exit', onExit)
        check()
      }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      const code = await exited
      const queued = pgQueuedQuery(err)
      if (queued !== undefined) throw new Error(`satang ${args.join(' ')} sent a query to a pg client that was running one: ${queued}`)
      return code
    },
  }
}
