import * as E from 'fp-ts/lib/Either.js'
import { describeHolder, lockFile, type InstanceLock } from '../adapters/os/instance-lock.ts'
import type { Logger } from '../logger.ts'

/**
 * One sandbox per state file. A sandbox that keeps its state (`satang sandbox --state FILE`, or the
 * built-in sandbox of `satang up` in `<data>/sandbox/state.json`) holds `FILE.lock` while it runs: a
 * second sandbox on the same file would append to the same journal and compact over the first one's
 * changes. The lock names its holder; a holder that no longer runs (SIGKILL) leaves a stale lock,
 * which the next sandbox replaces.
 */
export const lockSandboxState = async (log: Logger, statePath: string, command: string): Promise<E.Either<string, InstanceLock>> => {
  const locked = await lockFile({ log }, `${statePath}.lock`, command)
  if (E.isRight(locked)) return locked
  const f = locked.left
  if (f._tag === 'LockFailed') return E.left(f.message)
  return E.left(`the sandbox state ${statePath} is in use by ${describeHolder(f.holder)}; stop that sandbox first, or give this one its own state file (lock file ${f.path})`)
}
