import { createHash, randomUUID } from 'node:crypto'
import { link, mkdir, readFile, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { hostname } from 'node:os'
import { basename, dirname, join } from 'node:path'
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
 *
 * Replacing a stale lock is itself exclusive: only the process that creates the claim
 * `<lock>.replace.<digest of the stale text>.<n>` (O_EXCL) may move that lock aside. Without it, two
 * processes that both read the same stale lock could each move "it" away, the second moving the
 * first's fresh lock, and a third could take the name in between: two holders (seen under load). A
 * claim whose creator died is followed by claim n + 1, never removed while others may race on it;
 * claims are removed by the holder's release, and at a later start once a minute old.
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

/** Who holds a lock or a claim: enough to tell whether it still runs. */
const Claimant = t.intersection([t.strict({ pid: t.number, host: t.string }), t.exact(t.partial({ startTime: t.string, bootId: t.string }))])

/** A holder (of the lock, or of a claim to replace it) on another host cannot be checked from here: it counts as running. */
const holderRuns = (h: t.TypeOf<typeof Claimant>): boolean =>
  h.host !== hostname() || isRunning({ pid: h.pid, ...(h.startTime === undefined ? {} : { startTime: h.startTime }), ...(h.bootId === undefined ? {} : { bootId: h.bootId }) })

// Most attempts are the short waits for another process replacing the same stale lock (about 10 s in all).
const ATTEMPTS = 500
/** How long a process waits for another one that is replacing the same stale lock, between looks. */
const REPLACING_WAIT_MS = 20
/** Claims older than this are left over from earlier starts and may be removed. */
const CLAIM_MAX_AGE_MS = 60_000
/** A claim still unreadable after this long was abandoned half written. */
const UNREADABLE_CLAIM_MS = 10_000

const claimPrefix = (path: string): string => `${basename(path)}.replace.`

/**
 * Claims the replacement of the stale lock whose text is `text`: true when this process created the
 * claim; false while a live process holds it (wait and look again). A claim whose creator no longer
 * runs is followed by the next one.
 */
const claimReplacement = async (path: string, text: string, self: LockHolder): Promise<boolean> => {
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 32)
  const claimant = JSON.stringify(Claimant.encode(self))
  for (let n = 1; n <= 100; n += 1) {
    const claim = join(dirname(path), `${claimPrefix(path)}${digest}.${String(n)}`)
    try {
      await writeFile(claim, `${claimant}\n`, { mode: 0o644, flag: 'wx' })
      return true
    } catch (e) {
      if (codeOf(e) !== 'EEXIST') throw e
    }
    const held = await readIfExists(claim)
    let parsed: unknown
    try {
      parsed = held === undefined ? undefined : JSON.parse(held)
    } catch {
      parsed = undefined
    }
    const decoded = Claimant.decode(parsed)
    if (E.isLeft(decoded)) {
      // Being written (it is created empty, then filled), or its creator died in between: taken to be
      // running unless it has been unreadable for longer than any write takes.
      const info = await stat(claim).catch(() => undefined)
      if (info === undefined || Date.now() - info.mtimeMs < UNREADABLE_CLAIM_MS) return false
      continue
    }
    if (holderRuns(decoded.right)) return false
  }
  throw new Error(`more than 100 abandoned claims to replace the stale lock ${path}`)
}

/** Removes the replacement claims next to `path` (all of them, or those older than `olderThanMs`). */
const removeClaims = async (path: string, olderThanMs?: number): Promise<void> => {
  const dir = dirname(path)
  const names = (await readdir(dir).catch(() => [])).filter((n) => n.startsWith(claimPrefix(path)))
  for (const name of names) {
    const claim = join(dir, name)
    if (olderThanMs !== undefined) {
      const info = await stat(claim).catch(() => undefined)
      if (info === undefined || Date.now() - info.mtimeMs < olderThanMs) continue
    }
    await unlink(claim).catch((e: unknown) => {
      if (codeOf(e) !== 'ENOENT') throw e
    })
  }
}

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
        await removeClaims(path, CLAIM_MAX_AGE_MS)
        return E.right(makeLock(log, path, holder))
      } catch (e) {
        if (codeOf(e) !== 'EEXIST') return failed(`cannot create the lock file ${JSON.stringify(path)}`, e)
      }
      const text = await readIfExists(path)
      if (text === undefined) continue
      const existing = decodeHolder(text)
      if (existing !== undefined && holderRuns(existing)) return E.left({ _tag: 'DataDirInUse', path, holder: existing })
      if (!(await claimReplacement(path, text, holder))) {
        // Another process is replacing this stale lock: look again once it has.
        await sleep(REPLACING_WAIT_MS)
        continue
      }
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
      if (!(await stillOurs())) return
      await unlink(path)
      await removeClaims(path)
    },
  }
}
