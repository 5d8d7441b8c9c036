import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { link, lstat, mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'

/*
 * Every file satang writes, written without ever following a symbolic link: a scheduled job run by a
 * privileged user may write into a folder others can write, where a link planted at the file's name
 * (or as the folder) would redirect the write to any file. Whole files go to a fresh temporary file in
 * the same folder (O_CREAT | O_EXCL | O_NOFOLLOW), then renamed over the name (a rename replaces the
 * directory entry and never writes through it) or, for a file that must never be overwritten (a
 * generated secret), hard-linked to it (which fails when anything is there). Appends open the name
 * itself with O_APPEND | O_NOFOLLOW and check that it is a regular file.
 * test/platform/no-follow-writes.unit.test.ts keeps every other fs write out of src/.
 */

/** A write satang refused, with the path and the rule, for a message such as `"x/report.html": is a symbolic link…`. */
export type WriteRefused = { readonly _tag: 'WriteRefused'; readonly path: string; readonly rule: string }

export const writeRefused = (path: string, rule: string): WriteRefused => ({ _tag: 'WriteRefused', path, rule })

export const refusalText = (r: WriteRefused): string => `${JSON.stringify(r.path)}: ${r.rule}`

export type EntryKind = 'absent' | 'file' | 'directory' | 'symlink' | 'other'

const codeOf = (e: unknown): string | undefined => (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined)

/** What is at `path` itself (a link is a link, not what it points to). */
export const entryKind = async (path: string): Promise<EntryKind> => {
  try {
    const s = await lstat(path)
    return s.isSymbolicLink() ? 'symlink' : s.isFile() ? 'file' : s.isDirectory() ? 'directory' : 'other'
  } catch (e) {
    if (codeOf(e) === 'ENOENT') return 'absent'
    throw e
  }
}

const LINK_RULE = 'is a symbolic link: satang never writes through one (remove the link, or give the real path)'

/** The folder `dir`, created when absent; refused when it is a symbolic link or not a folder. */
export const ensureDirectory = async (dir: string): Promise<E.Either<WriteRefused, void>> => {
  let kind = await entryKind(dir)
  if (kind === 'absent') {
    await mkdir(dir, { recursive: true })
    kind = await entryKind(dir)
  }
  if (kind === 'symlink') return E.left(writeRefused(dir, LINK_RULE))
  if (kind !== 'directory') return E.left(writeRefused(dir, 'is not a folder'))
  return E.right(undefined)
}

/** Why `path` may not be written: it (or its folder) is a link, or it is not a regular file; null when it may. */
export const targetRefusal = async (path: string): Promise<WriteRefused | null> => {
  const folder = dirname(path)
  const folderKind = await entryKind(folder)
  if (folderKind === 'symlink') return writeRefused(folder, LINK_RULE)
  if (folderKind === 'absent') return writeRefused(folder, 'the folder does not exist')
  if (folderKind !== 'directory') return writeRefused(folder, 'is not a folder')
  const kind = await entryKind(path)
  if (kind === 'symlink') return writeRefused(path, LINK_RULE)
  if (kind === 'directory' || kind === 'other') return writeRefused(path, 'is not a regular file')
  return null
}

const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
// O_NONBLOCK: a FIFO swapped in after the check fails to open (ENXIO) instead of blocking the process.
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK

/** `mode`: of a new file (before the umask). `syncFolder`: also fsync the folder, so the new name survives a crash. */
export type WriteOptions = { readonly mode?: number; readonly syncFolder?: boolean }

const optionsOf = (o: number | WriteOptions | undefined, mode: number): Required<WriteOptions> =>
  typeof o === 'number' ? { mode: o, syncFolder: false } : { mode: o?.mode ?? mode, syncFolder: o?.syncFolder ?? false }

const temporaryFor = (path: string): string => join(dirname(path), `.${basename(path)}.${randomBytes(8).toString('hex')}.tmp`)

/** `data` in a new temporary file beside `path`, on disk; the caller renames or links it, then removes it. */
const writeTemporary = async (path: string, data: string | Uint8Array, mode: number): Promise<string> => {
  const temporary = temporaryFor(path)
  const handle = await open(temporary, NEW_FILE, mode)
  try {
    await handle.writeFile(data)
    await handle.sync()
  } catch (e) {
    await handle.close()
    await unlink(temporary).catch(() => undefined)
    throw e
  }
  await handle.close()
  return temporary
}

const syncFolderOf = async (path: string): Promise<void> => {
  const handle = await open(dirname(path), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Writes `data` to `path` through a temporary file in the same folder and a rename: an existing regular
 * file is replaced, a symbolic link at `path` or as its folder is refused (left), never followed.
 * Operational failures (no space, no permission) are thrown. A number for `options` is the mode.
 */
export const writeFileNoFollow = async (path: string, data: string | Uint8Array, options?: number | WriteOptions): Promise<E.Either<WriteRefused, void>> => {
  const { mode, syncFolder } = optionsOf(options, 0o644)
  const refused = await targetRefusal(path)
  if (refused !== null) return E.left(refused)
  const temporary = await writeTemporary(path, data, mode)
  try {
    // A link may have been planted while the data was written: the rename would replace it (not follow
    // it), but a link at a name satang writes means someone is tampering, so it is refused all the same.
    const late = await targetRefusal(path)
    if (late !== null) {
      await unlink(temporary)
      return E.left(late)
    }
    await rename(temporary, path)
  } catch (e) {
    await unlink(temporary).catch(() => undefined)
    throw e
  }
  if (syncFolder) await syncFolderOf(path)
  return E.right(undefined)
}

/**
 * Creates `path` holding `data` unless something is there already: `right('exists')` for a regular
 * file (left as it is: a secret is never overwritten), left for a link or anything else. The file
 * appears whole or not at all (written aside, then hard-linked into place), so a second process that
 * finds it reads all of it. Mode 0600 unless given; the folder is fsync'd.
 */
export const createFileNoFollow = async (path: string, data: string | Uint8Array, mode = 0o600): Promise<E.Either<WriteRefused, 'created' | 'exists'>> => {
  const refused = await targetRefusal(path)
  if (refused !== null) return E.left(refused)
  const temporary = await writeTemporary(path, data, mode)
  try {
    await link(temporary, path)
  } catch (e) {
    if (codeOf(e) !== 'EEXIST') throw e
    const now = await targetRefusal(path)
    return now === null ? E.right('exists') : E.left(now)
  } finally {
    await unlink(temporary).catch(() => undefined)
  }
  await syncFolderOf(path)
  return E.right('created')
}

/**
 * Opens `path` for appending (created with `mode`, default 0600, when absent): left when it or its
 * folder is a symbolic link or it is not a regular file. The caller closes the handle.
 */
export const openAppendNoFollow = async (path: string, mode = 0o600): Promise<E.Either<WriteRefused, FileHandle>> => {
  const refused = await targetRefusal(path)
  if (refused !== null) return E.left(refused)
  let handle: FileHandle
  try {
    handle = await open(path, APPEND, mode)
  } catch (e) {
    // Swapped in after the check: ELOOP for a link (O_NOFOLLOW), ENXIO for a FIFO with no reader.
    if (codeOf(e) === 'ELOOP') return E.left(writeRefused(path, LINK_RULE))
    if (codeOf(e) === 'ENXIO') return E.left(writeRefused(path, 'is not a regular file'))
    throw e
  }
  const stat = await handle.stat().catch(async (e: unknown) => {
    await handle.close()
    throw e
  })
  if (!stat.isFile()) {
    await handle.close()
    return E.left(writeRefused(path, 'is not a regular file'))
  }
  return E.right(handle)
}

/** Appends `data` to `path`, opened as `openAppendNoFollow` opens it. */
export const appendFileNoFollow = async (path: string, data: string | Uint8Array, mode = 0o600): Promise<E.Either<WriteRefused, void>> => {
  const opened = await openAppendNoFollow(path, mode)
  if (E.isLeft(opened)) return opened
  try {
    await opened.right.writeFile(data)
  } finally {
    await opened.right.close()
  }
  return E.right(undefined)
}
