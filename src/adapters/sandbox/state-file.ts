import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { decodeAll, formatViolations, type Violation } from '../../domain/violations.ts'
import type { Logger } from '../../logger.ts'
import { SandboxSnapshot } from './state.ts'

/** `--state FILE`: the sandbox state as JSON, loaded at start and saved after every change and at exit. */
export type StateFile = {
  readonly path: string
  /** The saved state, `right(undefined)` when the file does not exist yet, `left` when it is unusable. */
  readonly load: () => Promise<E.Either<string, SandboxSnapshot | undefined>>
  /** Saves soon; changes that arrive meanwhile are coalesced into one write. */
  readonly scheduleSave: () => void
  /** Waits until everything scheduled is written; rejects with the last write failure. */
  readonly flush: () => Promise<void>
}

const errorCode = (e: unknown): string | undefined => (e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined)

/** Reads and decodes a state file: `right(undefined)` when it does not exist yet, `left` when it is unusable. */
export const loadStateFile = async (path: string): Promise<E.Either<string, SandboxSnapshot | undefined>> => {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return E.right(undefined)
    return E.left(`cannot read state file ${JSON.stringify(path)}: ${errorCode(e) ?? 'unreadable'}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return E.left(`state file ${JSON.stringify(path)} is not JSON: ${e instanceof Error ? e.message : 'parse error'}`)
  }
  return E.mapLeft((vs: ReadonlyArray<Violation>) => `state file ${JSON.stringify(path)} is not a sandbox state:\n${formatViolations(vs)}`)(decodeAll(SandboxSnapshot, json))
}

export const makeStateFile = (path: string, snapshot: () => SandboxSnapshot, log: Logger): StateFile => {
  let writing: Promise<void> = Promise.resolve()
  let pending = false
  let lastError: unknown

  const write = async (): Promise<void> => {
    pending = false
    const tmp = `${path}.${String(process.pid)}.tmp`
    await mkdir(dirname(path), { recursive: true })
    await writeFile(tmp, `${JSON.stringify(snapshot(), null, 2)}\n`, 'utf8')
    // rename is atomic: a reader (or a crash) never sees a half-written file.
    await rename(tmp, path)
  }

  const scheduleSave = (): void => {
    if (pending) return
    pending = true
    writing = writing
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(write)
      .then(
        () => {
          lastError = undefined
        },
        (e: unknown) => {
          // Kept for flush(): the sandbox keeps serving, and close reports that the state was not saved.
          lastError = e
          log.error({ err: e, path }, 'could not save the sandbox state')
        },
      )
  }

  return {
    path,
    load: () => loadStateFile(path),
    scheduleSave,
    flush: async () => {
      await writing
      if (lastError !== undefined) throw new Error(`the sandbox state was not saved to ${path}`, { cause: lastError })
    },
  }
}
