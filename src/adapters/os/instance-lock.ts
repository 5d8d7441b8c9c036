import { randomUUID } from 'node:crypto'
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { dirname, join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { Logger } from '../../logger.ts'
import { identityOf, isRunning } from './processes.ts'
import { refusalText, writeFileNoFollow } from './safe-write.ts'

/**
 * One satang per data directory. The process that owns a data directory (its embedded PostgreSQL,
 * its sandbox state, its generated keys) holds `<data>/satang.lock`: a JSON file naming it (pid,
 * host, start, command, URL). Another process that finds the file checks whether the holder still
 * runs — same host, same boot, and the pid still names a process started at the recorded moment (a
 * reused pid does not count) — and refuses to start if it does. A lock whose holder is gone (SIGKILL,
 * OOM, power loss) is stale and replaced.
 */

export const LOCK_FILE = 'satang.lock'

const LockHolder = t.intersection([
  t.strict({ pid: t.number, host: t.string, startedAt: t.string, command: t.string, token: t.string }),
  t.partial({ startTime: t.string, bootId: t.string, url: t.string }),
])
export type LockHolder = t.TypeOf<typeof LockHolder>

export type LockFailure =
  | { readonly _tag: 'DataDirInUse'; readonly path: string; readonly holder: LockHolder }
  | { readonly _tag: 'LockFailed'; readonly retriable: false; readonly path: string; readonly message: string; readonly cause: unknown }

export type InstanceLock = {
  readonly path: string
  /** Adds what is known once the holder runs (its URL) to the lock file. */
  readonly describe: (extra: { readonly url: string }) => Promise<void>
  /** Removes the lock file, if it is still this process's. */
  readonly release: () => Promise<void>
}

/** "satang up (pid 1234 on host h, started 2026-11-25T03:41:33.000Z, serving http://127.0.0.1:8080)". */
export const describeHolder = (h: LockHolder): string =>
  `${h.command} (pid ${String(h.pid)}${h.host === hostname() ? '' : ` on host ${h.host}`}, started ${h.startedAt}${h.url === undefined ? '' : `, serving ${h.url}`})`

const codeOf = (e: unknown): string | undefined => (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined)

const readIfExists = async (path: string): Promise<string | undefined> =>
  readFile(path, 'utf8').catch((e: unknown) => {
    if (codeOf(e) === 'ENOENT') return undefined
    throw e
  })

const decodeHolder = (text: string): LockHolder | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  const decoded = LockHolder.decode(parsed)
  return E.isRight(decoded) ? decoded.right : undefined
}

/** A holder on another host cannot be checked from here: it counts as running. */
const holderRuns = (h: LockHolder): boolean =>
  h.host !== hostname() || isRunning({ pid: h.pid, ...(h.startTime === undefined ? {} : { startTime: h.startTime }), ...(h.bootId === undefined ? {} : { bootId: h.bootId }) })

const ATTEMPTS = 5

/** Takes `<dir>/satang.lock` for `command`, or says who holds it (see `lockFile`). */
export const lockDataDir = (deps: { readonly log: Logger }, dir: string, command: string): Promise<E.Either<LockFailure, InstanceLock>> => lockFile(deps, join(dir, LOCK_FILE), command)

/**
 * Takes the lock file `path` for `command`, or says who holds it. The file appears complete or not at
 * all (written aside, then hard-linked into place, which fails if one exists). A stale lock is
 * moved aside (an atomic rename) and removed only if what was moved is the lock judged stale; if
 * a starting process got in between, its lock is put back.
 */
export const lockFile = async (deps: { readonly log: Logger }, path: string, command: string): Promise<E.Either<LockFailure, InstanceLock>> => {
  const log = deps.log.child({ component: 'instance-lock' })
  const dir = dirname(path)
  const token = randomUUID()
  const self = identityOf()
  const holder: LockHolder = {
    pid: self.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    command,
    token,
    ...(self.startTime === undefined ? {} : { startTime: self.startTime }),
    ...(self.bootId === undefined ? {} : { bootId: self.bootId }),
  }
  const failed = (message: string, cause: unknown): E.Either<LockFailure, InstanceLock> => E.left({ _tag: 'LockFailed', retriable: false, path, message: `${message}: ${codeOf(cause) ?? String(cause)}`, cause })
  const staged = `${path}.${token}.new`
  try {
    await mkdir(dir, { recursive: true })
    await writeFile(staged, `${JSON.stringify(holder)}\n`, { mode: 0o644, flag: 'wx' })
  } catch (e) {
    return failed(`cannot write the lock file ${JSON.stringify(staged)}`, e)
  }
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      try {
        await link(staged, path)
        return E.right(makeLock(log, path, holder))
      } catch (e) {
        if (codeOf(e) !== 'EEXIST') return failed(`cannot create the lock file ${JSON.stringify(path)}`, e)
      }
      const text = await readIfExists(path)
      if (text === undefined) continue
      const existing = decodeHolder(text)
      if (existing !== undefined && holderRuns(existing)) return E.left({ _tag: 'DataDirInUse', path, holder: existing })
      const aside = `${path}.${token}.stale`
      try {
        await rename(path, aside)
      } catch (e) {
        if (codeOf(e) === 'ENOENT') continue
        throw e
      }
      const moved = await readFile(aside, 'utf8')
      if (moved !== text) {
        // Another process took the stale lock between our read and our rename: give its lock back.
        await link(aside, path).catch((e: unknown) => log.warn({ err: e, path }, 'could not restore a lock file taken at the same moment'))
        await unlink(aside)
        continue
      }
      await unlink(aside)
      log.warn(
        { path, stale: existing === undefined ? 'unreadable' : { pid: existing.pid, command: existing.command, startedAt: existing.startedAt } },
        existing === undefined ? 'replacing an unreadable lock file' : `replacing the lock of ${describeHolder(existing)}, which no longer runs`,
      )
    }
    return failed(`cannot take the lock file ${JSON.stringify(path)}`, `still contended after ${String(ATTEMPTS)} attempts`)
  } catch (e) {
    return failed(`cannot take the lock file ${JSON.stringify(path)}`, e)
  } finally {
    await unlink(staged).catch((e: unknown) => log.warn({ err: e, path: staged }, 'could not remove a staged lock file'))
  }
}

const makeLock = (log: Logger, path: string, holder: LockHolder): InstanceLock => {
  const stillOurs = async (): Promise<boolean> => {
    const text = await readIfExists(path)
    return text !== undefined && decodeHolder(text)?.token === holder.token
  }
  return {
    path,
    describe: async (extra) => {
      if (!(await stillOurs())) return log.warn({ path }, 'the lock file is no longer this process\'s; not updating it')
      // Not through a staged name of its own: the token in it is readable by anyone, so a link could wait there.
      const written = await writeFileNoFollow(path, `${JSON.stringify({ ...holder, ...extra })}\n`, 0o644)
      if (E.isLeft(written)) log.warn({ path }, `not updating the lock file: ${refusalText(written.left)}`)
    },
    release: async () => {
      if (await stillOurs()) await unlink(path)
    },
  }
}
