import { constants } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { ensureDirectory, openAppendNoFollow, refusalText, targetRefusal, writeFileNoFollow } from '../adapters/os/safe-write.ts'
import { decodeAll, formatViolations, type Violation } from '../domain/violations.ts'
import type { Logger } from '../logger.ts'
import type { SandboxClock } from './clock.ts'
import { parseJournal, replay, type JournalEntry } from './journal.ts'
import { refundKeyOf, SandboxSnapshot, type SandboxOrder, type SandboxRefund, type SandboxStore, type SandboxSubscription, type StoreChange } from './state.ts'

/*
 * `--state FILE`: a snapshot (FILE) and a journal (FILE.journal). Every change is appended to the
 * journal and fsync'd before an answer that depends on it leaves the sandbox; changes made while one
 * write is on its way go out together in the next (group commit). When the journal has grown as large
 * as the snapshot, the whole state becomes the new snapshot (written aside, fsync'd, renamed over FILE,
 * directory fsync'd) and the journal is emptied. Both files hold payer names, emails and phones: 0600.
 * Neither is read, written or chmod'ed through a symbolic link (src/adapters/os/safe-write.ts).
 */

/** The mode of both files: only the owner reads them. */
export const STATE_FILE_MODE = 0o600

/** The journal never grows past the larger of this and the snapshot's size before it is compacted. */
export const DEFAULT_COMPACT_AT_BYTES = 8 * 1024 * 1024

export const journalPathOf = (path: string): string => `${path}.journal`

export type StateFile = {
  readonly path: string
  readonly journalPath: string
  /** Resolves once every change made before the call is on disk; rejects when it could not be written. */
  readonly durable: () => Promise<void>
  /** Runs `effect` once the changes made so far are on disk: at once when they are, else after the commit that writes them. */
  readonly afterDurable: (effect: () => void) => void
  /** Writes the whole state as the snapshot, empties the journal and closes it; rejects when that failed. */
  readonly close: () => Promise<void>
}

const errorCode = (e: unknown): string | undefined => (e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined)

/** A file's text, `undefined` when it does not exist; never read through a symbolic link. */
const readOptional = async (path: string, what: string): Promise<E.Either<string, string | undefined>> => {
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    try {
      return E.right(await handle.readFile({ encoding: 'utf8' }))
    } finally {
      await handle.close()
    }
  } catch (e) {
    const code = errorCode(e)
    if (code === 'ENOENT') return E.right(undefined)
    if (code === 'ELOOP') return E.left(`${what} ${JSON.stringify(path)} is a symbolic link: the sandbox reads and writes its state only in a plain file`)
    return E.left(`cannot read ${what} ${JSON.stringify(path)}: ${code ?? 'unreadable'}`)
  }
}

const decodeSnapshot = (path: string, text: string): E.Either<string, SandboxSnapshot> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return E.left(`state file ${JSON.stringify(path)} is not JSON: ${e instanceof Error ? e.message : 'parse error'}`)
  }
  return E.mapLeft((vs: ReadonlyArray<Violation>) => `state file ${JSON.stringify(path)} is not a sandbox state:\n${formatViolations(vs)}`)(decodeAll(SandboxSnapshot, json))
}

const emptySnapshot = (): SandboxSnapshot => ({ format: 'satang-sandbox-state-v1', clock: new Date(0).toISOString(), sequence: 0, commit: 0, orders: [], refunds: [], subscriptions: [] })

/** The state the files hold, and whether the journal's last line was cut short by a crash. */
export type RecoveredState = { readonly state: SandboxSnapshot; readonly tornTail: boolean }

/** Reads the snapshot and replays the journal: `right(undefined)` when neither exists yet, `left` when they are unusable. */
export const recoverStateFile = async (path: string): Promise<E.Either<string, RecoveredState | undefined>> => {
  const journalPath = journalPathOf(path)
  const snapshotText = await readOptional(path, 'state file')
  if (E.isLeft(snapshotText)) return snapshotText
  const journalText = await readOptional(journalPath, 'state journal')
  if (E.isLeft(journalText)) return journalText
  if (snapshotText.right === undefined && journalText.right === undefined) return E.right(undefined)
  const snapshot = snapshotText.right === undefined ? E.right(emptySnapshot()) : decodeSnapshot(path, snapshotText.right)
  if (E.isLeft(snapshot)) return snapshot
  const journal = parseJournal(journalText.right ?? '')
  if (E.isLeft(journal)) return E.left(`state journal ${JSON.stringify(journalPath)} is damaged: ${journal.left}`)
  return E.right({ state: replay(snapshot.right, journal.right.entries), tornTail: journal.right.tornTail })
}

/** The saved state (snapshot and journal together), `right(undefined)` when there is none yet, `left` when it is unusable. */
export const loadStateFile = async (path: string): Promise<E.Either<string, SandboxSnapshot | undefined>> =>
  E.map((r: RecoveredState | undefined) => r?.state)(await recoverStateFile(path))

/** Fixes the mode of a file written before the sandbox kept it private (through a handle: a link is never followed); a file that does not exist is left so. */
const makePrivate = async (path: string): Promise<void> => {
  let handle: FileHandle
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return
    throw e
  }
  try {
    await handle.chmod(STATE_FILE_MODE)
  } finally {
    await handle.close()
  }
}

/** Throws, naming the file and the rule, when FILE or its journal (or their folder) is a link or not a regular file. */
const refuseLinks = async (path: string): Promise<void> => {
  for (const p of [path, journalPathOf(path)]) {
    const refused = await targetRefusal(p)
    if (refused !== null) throw new Error(`sandbox state: ${refusalText(refused)}`)
  }
}

type Waiter = { readonly resolve: () => void; readonly reject: (e: unknown) => void }
/** Who waits for one commit: callers of `durable` and effects held until it is on disk. */
type Slot = { readonly waiters: Waiter[]; readonly effects: Array<() => void> }
const emptySlot = (): Slot => ({ waiters: [], effects: [] })

export type StateFileDeps = { readonly store: SandboxStore; readonly clock: SandboxClock; readonly log: Logger }

/**
 * Loads FILE and its journal into the store (and moves the clock forward to the saved sandbox time),
 * then keeps them: every store change and clock move is committed. Starts by compacting, so a torn
 * last journal line is gone and both files are 0600. Throws when the files are unusable or cannot be written.
 */
export const openStateFile = async (deps: StateFileDeps, path: string, options: { readonly compactAtBytes?: number } = {}): Promise<StateFile> => {
  const { store, clock } = deps
  const log = deps.log.child({ component: 'sandbox-state' })
  const journalPath = journalPathOf(path)
  const folder = await ensureDirectory(dirname(path))
  if (E.isLeft(folder)) throw new Error(`sandbox state: ${refusalText(folder.left)}`)
  // Before anything is read: what a link points to is never read, nor quoted in an error.
  await refuseLinks(path)
  const recovered = await recoverStateFile(path)
  if (E.isLeft(recovered)) throw new Error(recovered.left)
  let commit = 0
  if (recovered.right !== undefined) {
    const { state, tornTail } = recovered.right
    // Its write never finished, so nothing that depended on it was answered.
    if (tornTail) log.warn({ path: journalPath }, 'ignored the incomplete last line of the state journal, left by a crash')
    store.restore(state)
    commit = state.commit ?? 0
    const saved = new Date(state.clock)
    // Sandbox time never goes back: a state saved after the clock was advanced resumes at that time.
    if (saved.getTime() > clock.now().getTime()) await clock.set(saved)
  }

  await makePrivate(path)
  const opened = await openAppendNoFollow(journalPath, STATE_FILE_MODE)
  if (E.isLeft(opened)) throw new Error(`sandbox state: ${refusalText(opened.left)}`)
  const journal: FileHandle = opened.right
  await journal.chmod(STATE_FILE_MODE)
  const compactAtBytes = options.compactAtBytes ?? DEFAULT_COMPACT_AT_BYTES
  let journalBytes = 0
  let snapshotBytes = 0

  // Changed since the last commit began, by identity: a record changed twice is written once.
  let orders = new Map<string, SandboxOrder>()
  let refunds = new Map<string, SandboxRefund>()
  let subscriptions = new Map<string, SandboxSubscription>()
  let dirty = false
  // The next commit writes the whole state: at start, after a reset or a restore, after a failed write.
  let needsSnapshot = true
  let next = emptySlot()
  let inFlight: Slot | undefined
  let running = false

  const needsCommit = (): boolean => dirty || needsSnapshot

  const writeSnapshot = async (state: SandboxSnapshot): Promise<void> => {
    const text = `${JSON.stringify(state, null, 2)}\n`
    // Written aside, fsync'd, renamed over FILE (atomic: a reader or a crash sees the old snapshot or the
    // new one, never half of one), the folder fsync'd.
    const written = await writeFileNoFollow(path, text, { mode: STATE_FILE_MODE, syncFolder: true })
    if (E.isLeft(written)) throw new Error(`sandbox state: ${refusalText(written.left)}`)
    // A crash before this point leaves entries the snapshot already holds: replay skips them by commit number.
    await journal.truncate(0)
    await journal.datasync()
    journalBytes = 0
    snapshotBytes = Buffer.byteLength(text)
  }

  const appendEntry = async (entry: JournalEntry): Promise<void> => {
    const line = `${JSON.stringify(entry)}\n`
    // One write per entry, so a crash can only cut the last line short.
    await journal.appendFile(line, 'utf8')
    await journal.datasync()
    journalBytes += Buffer.byteLength(line)
  }

  /** Takes everything changed so far and writes it; false when the write failed. */
  const commitOnce = async (): Promise<boolean> => {
    const slot = next
    next = emptySlot()
    inFlight = slot
    try {
      // Taken synchronously: the state written is exactly the state the waiters saw.
      commit += 1
      const now = clock.now()
      const records = { orders: [...orders.values()], refunds: [...refunds.values()], subscriptions: [...subscriptions.values()] }
      const whole = needsSnapshot || journalBytes >= Math.max(compactAtBytes, snapshotBytes)
      orders = new Map()
      refunds = new Map()
      subscriptions = new Map()
      dirty = false
      // Cleared now, so that a reset during the write asks for the next snapshot.
      needsSnapshot = false
      if (whole) {
        await writeSnapshot({ ...store.snapshot(now), commit })
      } else {
        await appendEntry({
          commit,
          clock: now.toISOString(),
          sequence: store.sequence(),
          ...(records.orders.length === 0 ? {} : { orders: records.orders }),
          ...(records.refunds.length === 0 ? {} : { refunds: records.refunds }),
          ...(records.subscriptions.length === 0 ? {} : { subscriptions: records.subscriptions }),
        })
      }
    } catch (e) {
      // What the journal holds after a failed write is unknown: the next commit rewrites everything, and
      // the effects held for this one wait for it.
      needsSnapshot = true
      inFlight = undefined
      next.effects.unshift(...slot.effects)
      log.error({ err: e, path }, 'could not save the sandbox state; answers that depend on it fail until it can be saved')
      const failure = new Error(`the sandbox state could not be saved to ${path}`, { cause: e })
      slot.waiters.forEach((w) => w.reject(failure))
      return false
    }
    inFlight = undefined
    // Effects first: what they send (notifications) is queued before the answers that waited go out.
    slot.effects.forEach((effect) => queueMicrotask(effect))
    slot.waiters.forEach((w) => w.resolve())
    return true
  }

  const run = async (): Promise<void> => {
    while (needsCommit()) {
      const ok = await commitOnce()
      // After a failure, try again only for callers that came meanwhile, never in a loop of our own.
      if (!ok && next.waiters.length === 0 && !dirty) break
    }
    running = false
  }

  const schedule = (): void => {
    if (running) return
    running = true
    // setImmediate: the changes of every request read in this turn of the event loop join the commit.
    setImmediate(() => void run())
  }

  const changed = (): void => {
    dirty = true
    schedule()
  }

  store.onChange((change: StoreChange) => {
    switch (change.kind) {
      case 'order':
        orders.set(change.order.orderId, change.order)
        break
      case 'refund':
        refunds.set(refundKeyOf(change.refund), change.refund)
        break
      case 'subscription':
        subscriptions.set(change.subscription.recurringBillId, change.subscription)
        break
      case 'sequence':
        break
      case 'replaced':
        needsSnapshot = true
        break
    }
    changed()
  })
  // Sandbox time is part of the state: an answer that moved it must not be undone by a crash.
  const stopWatchingClock = clock.onAdvance(async () => changed())

  const durable = (): Promise<void> => {
    if (needsCommit()) {
      schedule()
      return new Promise((resolve, reject) => next.waiters.push({ resolve, reject }))
    }
    const slot = inFlight
    return slot === undefined ? Promise.resolve() : new Promise((resolve, reject) => slot.waiters.push({ resolve, reject }))
  }

  try {
    await durable()
  } catch (e) {
    stopWatchingClock()
    await journal.close()
    throw e
  }

  return {
    path,
    journalPath,
    durable,
    afterDurable: (effect) => {
      if (needsCommit()) {
        next.effects.push(effect)
        schedule()
      } else if (inFlight !== undefined) inFlight.effects.push(effect)
      else effect()
    },
    close: async () => {
      stopWatchingClock()
      needsSnapshot = true
      try {
        await durable()
      } finally {
        await journal.close()
      }
    },
  }
}
