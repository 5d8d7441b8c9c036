import { createHash } from 'node:crypto'
import { constants } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'

/*
 * Reading files that may come from elsewhere (a report folder handed over for checking, a heads file
 * kept outside the database, fields for the signature tool) without letting their size decide how much
 * memory satang takes: a file is read only up to a stated number of bytes, and one larger than that is
 * refused with its size and the limit, before it is parsed. A file that must be read whole, however
 * large (a report's data file, to check its SHA-256), is hashed as it streams in, in constant memory.
 * Neither follows a symbolic link at the name when asked not to.
 */

/** Why a file was not read: larger than the limit (with how large, when the file system says). */
export type TooLarge = { readonly _tag: 'TooLarge'; readonly maxBytes: number; readonly bytes: number | null }

const CHUNK = 64 * 1024

/** "16 MiB", "64 KiB", "300 bytes": a byte count as people read it. */
export const formatBytes = (n: number): string => {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${String(n / (1024 * 1024))} MiB`
  if (n >= 1024 && n % 1024 === 0) return `${String(n / 1024)} KiB`
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${String(n)} bytes`
}

/** The rule a refused file broke, for a message: "is 700.0 MiB, more than the 16 MiB satang reads of it". */
export const tooLargeText = (t: TooLarge): string =>
  `is ${t.bytes === null ? 'larger than' : `${formatBytes(t.bytes)}, more than`} the ${formatBytes(t.maxBytes)} satang reads of it`

/** Reads at most `maxBytes` from an open file; Left when there is more. Works for pipes and devices too (no size is trusted). */
export const readHandleBounded = async (handle: FileHandle, maxBytes: number): Promise<E.Either<TooLarge, Buffer>> => {
  const stat = await handle.stat()
  if (stat.isFile() && stat.size > maxBytes) return E.left({ _tag: 'TooLarge', maxBytes, bytes: stat.size })
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes + 1 - total))
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
    if (bytesRead === 0) break
    total += bytesRead
    if (total > maxBytes) return E.left({ _tag: 'TooLarge', maxBytes, bytes: stat.isFile() ? Math.max(stat.size, total) : null })
    chunks.push(buffer.subarray(0, bytesRead))
  }
  return E.right(Buffer.concat(chunks, total))
}

const openFlags = (noFollow: boolean): number => constants.O_RDONLY | (noFollow ? constants.O_NOFOLLOW : 0)

/** The bytes of `path`, at most `maxBytes`; throws what opening or reading throws (ENOENT, ELOOP for a link when `noFollow`). */
export const readFileBounded = async (path: string, maxBytes: number, options: { readonly noFollow?: boolean } = {}): Promise<E.Either<TooLarge, Buffer>> => {
  const handle = await open(path, openFlags(options.noFollow === true))
  try {
    return await readHandleBounded(handle, maxBytes)
  } finally {
    await handle.close()
  }
}

/** At most `maxBytes` of a stream (stdin); Left when there is more. */
export const readStreamBounded = async (stream: AsyncIterable<unknown>, maxBytes: number): Promise<E.Either<TooLarge, Buffer>> => {
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array)
    total += b.length
    if (total > maxBytes) return E.left({ _tag: 'TooLarge', maxBytes, bytes: null })
    chunks.push(b)
  }
  return E.right(Buffer.concat(chunks, total))
}

/** SHA-256 (hex) and length of the file at `path`, read in chunks: constant memory, whatever its size. */
export const sha256OfFile = async (path: string, options: { readonly noFollow?: boolean } = {}): Promise<{ readonly sha256: string; readonly bytes: number }> => {
  const handle = await open(path, openFlags(options.noFollow === true))
  try {
    const hash = createHash('sha256')
    const buffer = Buffer.allocUnsafe(1024 * 1024)
    let bytes = 0
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
      if (bytesRead === 0) break
      hash.update(buffer.subarray(0, bytesRead))
      bytes += bytesRead
    }
    return { sha256: hash.digest('hex'), bytes }
  } finally {
    await handle.close()
  }
}

/** A file larger than a reader takes: `code` as the file system's errors have one, the message says the size and the limit. */
export class FileTooLarge extends Error {
  override readonly name = 'FileTooLarge'
  readonly code = 'EFBIG'
  readonly tooLarge: TooLarge
  constructor(tooLarge: TooLarge) {
    super(tooLargeText(tooLarge))
    this.tooLarge = tooLarge
  }
}

/** The text (UTF-8) of `path`, at most `maxBytes` of it: throws what opening or reading throws, or FileTooLarge. */
export const readTextBounded = async (path: string, maxBytes: number): Promise<string> => {
  const read = await readFileBounded(path, maxBytes)
  if (E.isLeft(read)) throw new FileTooLarge(read.left)
  return read.right.toString('utf8')
}

/** Why a file could not be read, for a message: its size against the limit, "no such file", or the system's code. */
export const readFailureText = (e: unknown): string => {
  if (e instanceof FileTooLarge) return e.message
  const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : 'unreadable'
  return code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : code
}

/** How much of each kind of file satang reads, at start and in its commands (a larger one is refused before it is parsed). */
export const READ_LIMITS = {
  /** SATANG_CONFIG: a JSON object of settings. */
  config: 1024 * 1024,
  /** A PEM key (an RSA key of 16,384 bits is about 13 KiB). */
  key: 64 * 1024,
  /** A PEM file of certificates: a CA bundle (the system's whole bundle is about 200 KiB). */
  certificates: 4 * 1024 * 1024,
  /** A secret file: a password, a session secret, the API tokens. */
  secret: 1024 * 1024,
  /** `users --password-file`: one line. */
  password: 64 * 1024,
  /** A fields document (stdin or `signature --fields FILE`): a gateway request's fields are a few KiB. */
  fields: 1024 * 1024,
  /** `audit verify --against`: one head per stream (about 150 bytes each): a few million streams (and under the longest string Node makes). */
  heads: 500 * 1024 * 1024,
  /** `SATANG_ANCHOR_FILE`: one line per anchor (hourly: a few MiB a year). */
  anchors: 256 * 1024 * 1024,
} as const
