import { readFileSync } from 'node:fs'

/**
 * Which process a pid names, beyond the pid itself: pids are reused, so "pid 1234 is alive" does not
 * say it is still the process that wrote a lock file or a `postmaster.pid`. On Linux a process is
 * identified by its start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot) and the boot
 * it belongs to; elsewhere only the pid is known.
 */
export type ProcessIdentity = {
  readonly pid: number
  /** `/proc/<pid>/stat` start time; absent where there is no `/proc`. */
  readonly startTime?: string
  /** `/proc/sys/kernel/random/boot_id`; absent where there is no `/proc`. */
  readonly bootId?: string
}

const readProc = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8')
  } catch (e) {
    // No such process (ENOENT, ESRCH) or no /proc at all: nothing to learn here.
    if (typeof e === 'object' && e !== null && 'code' in e && (e.code === 'ENOENT' || e.code === 'ESRCH' || e.code === 'ENOTDIR')) return undefined
    throw e
  }
}

/**
 * The start time of `pid` from `/proc`, or undefined when no such process runs (a zombie, dead but not
 * yet reaped by its parent, counts as gone) or there is no `/proc`.
 */
export const startTimeOf = (pid: number): string | undefined => {
  const stat = readProc(`/proc/${String(pid)}/stat`)
  if (stat === undefined) return undefined
  // `pid (comm) state …`: comm may hold spaces and parentheses, so fields are counted after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return fields[0] === 'Z' || fields[0] === 'X' ? undefined : fields[19]
}

export const bootId = (): string | undefined => readProc('/proc/sys/kernel/random/boot_id')?.trim()

/** Whether a process with this pid exists (signal 0); EPERM means it exists but is someone else's. */
export const pidExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return typeof e === 'object' && e !== null && 'code' in e && e.code === 'EPERM'
  }
}

/** This process, or `pid`, as it can be recognised later. */
export const identityOf = (pid: number = process.pid): ProcessIdentity => {
  const startTime = startTimeOf(pid)
  const boot = bootId()
  return { pid, ...(startTime === undefined ? {} : { startTime }), ...(boot === undefined ? {} : { bootId: boot }) }
}

/**
 * Whether the process `identity` describes still runs: same boot, and the pid names a process that
 * started at the same moment (so a reused pid is not mistaken for it). Without `/proc`, here or where
 * `identity` was taken, only the pid can be checked.
 */
export const isRunning = (identity: ProcessIdentity): boolean => {
  const boot = bootId()
  if (boot === undefined || identity.bootId === undefined) return pidExists(identity.pid)
  if (identity.bootId !== boot) return false
  const startTime = startTimeOf(identity.pid)
  return startTime !== undefined && startTime === identity.startTime
}
