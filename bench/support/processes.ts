// Child processes of the bench: load generators and satang itself run as processes of their own, so
// the bench process only orchestrates. Helpers to start them, wait for a line, read their JSON answer,
// and sample their memory from /proc (Linux).
import { spawn, type ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

/** The CLI, started as a process of its own. */
export const SATANG_BIN = fileURLToPath(new URL('../../bin/satang.js', import.meta.url))
/** A script of bench/support, to run with `runScript` / `startScript`. */
export const supportScript = (name: string): string => fileURLToPath(new URL(`./${name}`, import.meta.url))

export type Finished = { readonly code: number | null; readonly stdout: string; readonly stderr: string; readonly seconds: number }

/** Runs `node <args>` to its end. `onLine` sees stderr lines as they come (progress). */
export const runNode = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env, onLine?: (line: string) => void, onStart?: (pid: number | undefined) => void): Promise<Finished> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    onStart?.(child.pid)
    let stdout = ''
    let stderr = ''
    let partial = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
      if (onLine === undefined) return
      partial += d
      const lines = partial.split('\n')
      partial = lines.pop() ?? ''
      for (const l of lines) onLine(l)
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 }))
  })

/** Runs a bench/support script that prints one JSON object as its last stdout line; fails loudly otherwise. */
export const runJson = async <A>(script: string, args: ReadonlyArray<string>, onLine?: (line: string) => void): Promise<A> => {
  const r = await runNode([supportScript(script), ...args], process.env, onLine)
  const last = r.stdout.trim().split('\n').at(-1) ?? ''
  if (r.code !== 0 || last === '') throw new Error(`${script} ${args.filter((a) => !a.startsWith('postgres')).join(' ')} exited ${String(r.code)}: ${r.stderr.slice(-2000)}`)
  return JSON.parse(last) as A
}

export type Running = {
  readonly child: ChildProcess
  readonly pid: number | undefined
  /** Everything written so far. */
  readonly output: () => string
  /** Resolves with the first stdout line matching, or rejects if the process ends first. */
  readonly waitFor: (re: RegExp, timeoutMs?: number) => Promise<RegExpExecArray>
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  readonly stop: (graceMs?: number) => Promise<number | null>
  readonly exited: Promise<number | null>
}

/** Starts a long-running process (`node <args>`), output kept for `waitFor`. */
export const startNode = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Running => {
  const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  const waiters = new Set<() => void>()
  const exited = new Promise<number | null>((done) => {
    const end = (code: number | null): void => {
      done(code)
      for (const w of waiters) w()
    }
    child.on('close', end)
    // A process that could not be started (or signalled): said in its output, and it counts as ended;
    // unheard, the 'error' event would end the whole bench process.
    child.on('error', (err) => {
      out += `\n${err.message}\n`
      end(null)
    })
  })
  const onData = (d: string): void => {
    out += d
    for (const w of waiters) w()
  }
  child.stdout?.setEncoding('utf8').on('data', onData)
  child.stderr?.setEncoding('utf8').on('data', onData)
  let ended = false
  void exited.then(() => (ended = true))
  const waitFor = (re: RegExp, timeoutMs = 120_000): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`no line matching ${String(re)} within ${String(timeoutMs)} ms; output:\n${out.slice(-3000)}`))
      }, timeoutMs)
      const check = (): void => {
        const m = re.exec(out)
        if (m !== null) {
          clearTimeout(timer)
          waiters.delete(check)
          resolve(m)
        } else if (ended) {
          clearTimeout(timer)
          waiters.delete(check)
          reject(new Error(`process ended before printing ${String(re)}; output:\n${out.slice(-3000)}`))
        }
      }
      waiters.add(check)
      check()
    })
  const stop = async (graceMs = 15_000): Promise<number | null> => {
    if (ended) return exited
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
    const code = await exited
    clearTimeout(timer)
    return code
  }
  return { child, pid: child.pid, output: () => out, waitFor, stop, exited }
}

/** Resident and peak resident memory of a process in MiB (VmRSS, VmHWM), from /proc; null once it is gone (or ended and not yet reaped). */
export const memoryOf = async (pid: number | undefined): Promise<{ rss: number; peak: number } | null> => {
  if (pid === undefined) return null
  const status = await readFile(`/proc/${String(pid)}/status`, 'utf8').catch(() => null)
  if (status === null) return null
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
  const rss = kb('VmRSS')
  const peak = kb('VmHWM')
  // A process that has ended but is not yet reaped (a zombie) has no memory lines: nothing to report.
  if (Number.isNaN(rss) || Number.isNaN(peak)) return null
  return { rss: rss / 1024, peak: peak / 1024 }
}

export type RssSamples = { readonly stop: () => Promise<ReadonlyArray<{ readonly at: number; readonly rss: number; readonly peak: number }>> }

/** Samples a process's memory every `everyMs` until stopped. */
export const sampleMemory = (pid: number | undefined, everyMs = 500): RssSamples => {
  const samples: Array<{ at: number; rss: number; peak: number }> = []
  const started = performance.now()
  let running = true
  const loop = (async () => {
    while (running) {
      const m = await memoryOf(pid)
      if (m !== null) samples.push({ at: (performance.now() - started) / 1000, ...m })
      await new Promise((r) => setTimeout(r, everyMs))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      const last = await memoryOf(pid)
      if (last !== null) samples.push({ at: (performance.now() - started) / 1000, ...last })
      return samples
    },
  }
}
