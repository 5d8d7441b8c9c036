// CPU seconds of processes and of PostgreSQL's backends, read from /proc (Linux; null elsewhere): what
// the bench's groups report as "where the time goes", the figure to read when other work shares the
// machine and rates follow the load more than the code.
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'

/**
 * CPU seconds (user + system) a process has used so far, from /proc (Linux), null elsewhere; with
 * `children`, those of its children that ended too (PostgreSQL's backends are the postmaster's).
 */
export const cpuSecondsOf = async (pid: number | undefined, children = false): Promise<number | null> => {
  if (pid === undefined) return null
  const stat = await readFile(`/proc/${String(pid)}/stat`, 'utf8').catch(() => null)
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ')
  if (fields === undefined) return null
  const own = Number(fields[11]) + Number(fields[12])
  return (children ? own + Number(fields[13]) + Number(fields[14]) : own) / 100
}

/** CPU seconds of every PostgreSQL process of this machine (the server is shared: an upper bound of the run's share). */
export const postgresCpuSeconds = async (): Promise<number | null> => {
  const pids = await readdir('/proc').catch(() => [])
  let total = 0
  let found = false
  for (const pid of pids.filter((p) => /^\d+$/.test(p))) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null)
    if (stat === null || !stat.includes('(postgres)')) continue
    found = true
    total += (await cpuSecondsOf(Number(pid), true)) ?? 0
  }
  return found ? total : null
}

/**
 * CPU seconds the PostgreSQL backends of one database use while `during` runs, sampled every 250 ms
 * from /proc (a backend's last 250 ms before it ends are lost): the run's own share of the shared
 * server, which the whole server's figure cannot give on a machine other work uses too.
 */
export const backendCpuDuring = async <T>(dbName: string, during: Promise<T>): Promise<{ readonly result: T; readonly seconds: number | null }> => {
  // `during` is already running: a rejection that came while the first sample reads /proc, before
  // the await below, would otherwise count as unhandled and end the whole bench process.
  during.catch(() => undefined)
  const first = new Map<string, number>()
  const last = new Map<string, number>()
  let sampling = true
  const sample = async (initial: boolean): Promise<void> => {
    for (const pid of (await readdir('/proc').catch(() => [])).filter((p) => /^\d+$/.test(p))) {
      const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')
      if (!cmd.startsWith('postgres:') || !cmd.includes(` ${dbName} `)) continue
      const cpu = await cpuSecondsOf(Number(pid))
      if (cpu === null) continue
      if (!first.has(pid)) first.set(pid, initial ? cpu : 0)
      last.set(pid, cpu)
    }
  }
  await sample(true)
  const loop = (async () => {
    while (sampling) {
      await new Promise((r) => setTimeout(r, 250))
      await sample(false)
    }
  })()
  try {
    const result = await during
    return { result, seconds: existsSync('/proc/self/stat') ? [...last].reduce((n, [pid, cpu]) => n + cpu - (first.get(pid) ?? 0), 0) : null }
  } finally {
    sampling = false
    await loop
  }
}
