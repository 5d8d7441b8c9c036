import { createHash, sign, verify, type KeyObject } from 'node:crypto'
import { readdir, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { JsonObject } from '../../domain/events/envelope.ts'
import { anchorKeyIdOf } from '../eventstore/anchors.ts'
import { readFileBounded, sha256OfFile, tooLargeText, type TooLarge } from '../os/bounded-read.ts'
import { ensureDirectory, entryKind, writeFileNoFollow, writeRefused, type WriteRefused } from '../os/safe-write.ts'

/*
 * A report folder (`--out DIR`) and its `manifest.json`: each file's SHA-256 and size, and what the
 * report was built from (run ids, log positions, the command that rebuilds it), so an auditor can
 * later show the files were not altered (`satang report verify DIR`) and build the report again.
 *
 * The manifest is signed with the anchor key (Ed25519, the key that signs the event log's anchors):
 * `manifest.sig` holds the signature over `satang-report-signature-v1\n` followed by the exact bytes of
 * `manifest.json`, so a manifest rewritten with its SHA-256 lines recomputed no longer verifies, even
 * where the manifest's own SHA-256 was not filed. Manifests of format v1 (before signing) are unsigned.
 */

export const MANIFEST = 'manifest.json'
export const SIGNATURE = 'manifest.sig'
export const MANIFEST_FORMAT = 'satang-report-manifest-v2'
export const UNSIGNED_MANIFEST_FORMAT = 'satang-report-manifest-v1'
export const SIGNATURE_FORMAT = 'satang-report-signature-v1'

export type ReportFile = { readonly name: string; readonly content: string }

/** The anchor key that signs manifests. */
export type ManifestSigner = { readonly privateKey: KeyObject }

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex')

const signedMessage = (manifest: Buffer): Buffer => Buffer.concat([Buffer.from(`${SIGNATURE_FORMAT}\n`, 'utf8'), manifest])

const FileEntry = t.type({ name: t.string, sha256: t.string, bytes: t.number })

const ManifestCodec = t.union([
  t.type({ format: t.literal(UNSIGNED_MANIFEST_FORMAT), files: t.array(FileEntry) }),
  t.type({ format: t.literal(MANIFEST_FORMAT), files: t.array(FileEntry), signature: t.type({ algorithm: t.literal('ed25519'), key_id: t.string, file: t.literal(SIGNATURE) }) }),
])

const SignatureCodec = t.type({ format: t.literal(SIGNATURE_FORMAT), algorithm: t.literal('ed25519'), key_id: t.string, signature: t.string })

const FILED_RULE = `holds a filed report (${MANIFEST}): satang does not replace it; choose another folder, or pass --force to replace it`

const isPlainName = (name: string): boolean => name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\\')

/**
 * Refused when `dir` holds a filed report (a `manifest.json`, whatever it is) and `force` is not given:
 * writing any file into it (`--csv`, `--html`, `--out`) would change a report someone filed.
 */
export const filedReportRefusal = async (dir: string, force: boolean): Promise<WriteRefused | null> =>
  !force && (await entryKind(join(dir, MANIFEST))) !== 'absent' ? writeRefused(dir, FILED_RULE) : null

/** Writes `files` into `dir` (created if missing) without following links, never over a filed report unless `force`. */
export const writeReportFiles = async (dir: string, files: ReadonlyArray<ReportFile>, force: boolean): Promise<E.Either<WriteRefused, void>> => {
  const folder = await ensureDirectory(dir)
  if (E.isLeft(folder)) return folder
  const filed = await filedReportRefusal(dir, force)
  if (filed !== null) return E.left(filed)
  for (const f of files) {
    const written = await writeFileNoFollow(join(dir, f.name), f.content)
    if (E.isLeft(written)) return written
  }
  return E.right(undefined)
}

/**
 * Writes the files, their manifest and its signature into `dir` (created if missing); returns the
 * manifest's own SHA-256. Left, with nothing written, when `dir` or an entry at one of the names is a
 * symbolic link, or `dir` holds a filed report and `force` is not given.
 */
export const writeReportDir = async (
  dir: string,
  files: ReadonlyArray<ReportFile>,
  about: JsonObject,
  options: { readonly force: boolean; readonly signer: ManifestSigner },
): Promise<E.Either<WriteRefused, { readonly manifestSha256: string; readonly keyId: string; readonly files: ReadonlyArray<string> }>> => {
  for (const f of files) if (f.name === MANIFEST || f.name === SIGNATURE || !isPlainName(f.name)) throw new Error(`report file name ${f.name} is not allowed`)
  const folder = await ensureDirectory(dir)
  if (E.isLeft(folder)) return folder
  const names = [...files.map((f) => f.name), MANIFEST, SIGNATURE]
  for (const name of names) {
    const kind = await entryKind(join(dir, name))
    if (kind === 'symlink') return E.left(writeRefused(join(dir, name), 'is a symbolic link: satang never writes through one (remove the link, or give the real path)'))
    if (kind === 'directory' || kind === 'other') return E.left(writeRefused(join(dir, name), 'is not a regular file'))
  }
  const filed = await filedReportRefusal(dir, options.force)
  if (filed !== null) return E.left(filed)
  // Replacing (--force): the old manifest goes first, so that a folder left half-written by a crash
  // holds no manifest that seems to vouch for it.
  for (const name of [SIGNATURE, MANIFEST]) if ((await entryKind(join(dir, name))) === 'file') await unlink(join(dir, name))

  const entries: Array<{ name: string; sha256: string; bytes: number }> = []
  for (const f of files) {
    const data = Buffer.from(f.content, 'utf8')
    const written = await writeFileNoFollow(join(dir, f.name), data)
    if (E.isLeft(written)) return written
    entries.push({ name: f.name, sha256: sha256(data), bytes: data.length })
  }
  const keyId = anchorKeyIdOf(options.signer.privateKey)
  const manifest = Buffer.from(`${JSON.stringify({ format: MANIFEST_FORMAT, ...about, files: entries, signature: { algorithm: 'ed25519', key_id: keyId, file: SIGNATURE } }, null, 2)}\n`, 'utf8')
  const signature = sign(null, signedMessage(manifest), options.signer.privateKey).toString('base64')
  const wroteManifest = await writeFileNoFollow(join(dir, MANIFEST), manifest)
  if (E.isLeft(wroteManifest)) return wroteManifest
  const wroteSignature = await writeFileNoFollow(join(dir, SIGNATURE), `${JSON.stringify({ format: SIGNATURE_FORMAT, algorithm: 'ed25519', key_id: keyId, signature }, null, 2)}\n`)
  if (E.isLeft(wroteSignature)) return wroteSignature
  return E.right({ manifestSha256: sha256(manifest), keyId, files: names })
}

export type VerifyProblem =
  | { readonly _tag: 'Altered'; readonly file: string; readonly expected: string; readonly actual: string }
  | { readonly _tag: 'Missing'; readonly file: string }
  | { readonly _tag: 'Unlisted'; readonly file: string }
  | { readonly _tag: 'NotAFile'; readonly file: string }
  | { readonly _tag: 'BadSignature'; readonly reason: string }
  | { readonly _tag: 'Unsigned'; readonly format: string }

/** The manifest's signature: checked and valid, or the manifest (format v1) has none. */
export type SignatureStatus = { readonly _tag: 'Valid'; readonly keyId: string } | { readonly _tag: 'Invalid'; readonly reason: string } | { readonly _tag: 'Unsigned' }

export type Verified = {
  readonly manifestSha256: string
  readonly checked: ReadonlyArray<string>
  readonly signature: SignatureStatus
  readonly problems: ReadonlyArray<VerifyProblem>
}

/** Why a manifest cannot be verified at all: none readable, or it is signed and no anchor key was given to check it. */
export type VerifyRefused = { readonly _tag: 'NoManifest'; readonly reason: string } | { readonly _tag: 'NoKey'; readonly keyId: string }

/**
 * The most read of a folder's manifest.json and manifest.sig: a folder to check may come from anyone,
 * and these two are parsed whole. A manifest names a handful of files and the runs of its days (a year's
 * range is well under 1 MiB); a signature is one line.
 */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024
export const MAX_SIGNATURE_BYTES = 64 * 1024

/** The bytes of `path` when it is a regular file (a link is not read through), at most `maxBytes`; null when absent or not a file. */
const readRegular = async (path: string, maxBytes: number): Promise<E.Either<TooLarge, Buffer> | null> => {
  if ((await entryKind(path)) !== 'file') return null
  return await readFileBounded(path, maxBytes, { noFollow: true }).catch(() => null)
}

/** SHA-256 of `path` when it is a regular file (a link is not read through), read in chunks whatever its size; null when absent or not a file. */
const hashRegular = async (path: string): Promise<string | null> => {
  if ((await entryKind(path)) !== 'file') return null
  return (await sha256OfFile(path, { noFollow: true }).catch(() => null))?.sha256 ?? null
}

const checkSignature = (manifest: Buffer, signatureRead: E.Either<TooLarge, Buffer> | null, keyId: string, publicKey: KeyObject): SignatureStatus => {
  if (signatureRead === null) return { _tag: 'Invalid', reason: `${SIGNATURE} is missing: the manifest says it is signed by anchor key ${keyId}` }
  if (E.isLeft(signatureRead)) return { _tag: 'Invalid', reason: `${SIGNATURE} ${tooLargeText(signatureRead.left)}` }
  const signatureText = signatureRead.right
  let parsed: unknown
  try {
    parsed = JSON.parse(signatureText.toString('utf8'))
  } catch {
    return { _tag: 'Invalid', reason: `${SIGNATURE} is not valid JSON` }
  }
  const sig = SignatureCodec.decode(parsed)
  if (E.isLeft(sig)) return { _tag: 'Invalid', reason: `${SIGNATURE} is not a ${SIGNATURE_FORMAT} signature` }
  const verifyingKeyId = anchorKeyIdOf(publicKey)
  if (sig.right.key_id !== keyId) return { _tag: 'Invalid', reason: `${SIGNATURE} names key ${sig.right.key_id}, the manifest key ${keyId}` }
  if (keyId !== verifyingKeyId) return { _tag: 'Invalid', reason: `the manifest is signed by key ${keyId}, not by the anchor key ${verifyingKeyId}` }
  let valid = false
  try {
    valid = verify(null, signedMessage(manifest), publicKey, Buffer.from(sig.right.signature, 'base64'))
  } catch {
    // a malformed key or signature is an invalid signature, nothing more
    valid = false
  }
  return valid ? { _tag: 'Valid', keyId } : { _tag: 'Invalid', reason: `the signature of ${MANIFEST} by anchor key ${keyId} does not verify: the manifest was rewritten` }
}

/**
 * Checks the manifest's signature with `publicKey` (the anchor key), every file the manifest lists
 * against its SHA-256, and lists files it does not name. An unsigned (v1) manifest is a problem unless
 * `allowUnsigned`. Left: no readable manifest, or a signed one and no key to check it with.
 */
export const verifyReportDir = async (dir: string, options: { readonly publicKey: KeyObject | null; readonly allowUnsigned: boolean }): Promise<E.Either<VerifyRefused, Verified>> => {
  const manifestRead = await readRegular(join(dir, MANIFEST), MAX_MANIFEST_BYTES).catch(() => null)
  if (manifestRead === null) return E.left({ _tag: 'NoManifest', reason: `no ${MANIFEST} (a regular file) in ${dir}` })
  if (E.isLeft(manifestRead)) return E.left({ _tag: 'NoManifest', reason: `${join(dir, MANIFEST)} ${tooLargeText(manifestRead.left)}: it is not a manifest satang wrote` })
  const manifestText = manifestRead.right
  let parsed: unknown
  try {
    parsed = JSON.parse(manifestText.toString('utf8'))
  } catch {
    return E.left({ _tag: 'NoManifest', reason: `${join(dir, MANIFEST)} is not valid JSON` })
  }
  const decoded = ManifestCodec.decode(parsed)
  if (E.isLeft(decoded)) return E.left({ _tag: 'NoManifest', reason: `${join(dir, MANIFEST)} is not a ${MANIFEST_FORMAT} (or ${UNSIGNED_MANIFEST_FORMAT}) manifest` })
  const manifest = decoded.right
  const problems: VerifyProblem[] = []
  const listed = new Set<string>([MANIFEST])
  let signature: SignatureStatus
  if (manifest.format === MANIFEST_FORMAT) {
    if (options.publicKey === null) return E.left({ _tag: 'NoKey', keyId: manifest.signature.key_id })
    listed.add(SIGNATURE)
    signature = checkSignature(manifestText, await readRegular(join(dir, SIGNATURE), MAX_SIGNATURE_BYTES), manifest.signature.key_id, options.publicKey)
    if (signature._tag === 'Invalid') problems.push({ _tag: 'BadSignature', reason: signature.reason })
  } else {
    signature = { _tag: 'Unsigned' }
    if (!options.allowUnsigned) problems.push({ _tag: 'Unsigned', format: manifest.format })
  }
  const checked: string[] = []
  for (const f of manifest.files) {
    listed.add(f.name)
    if (!isPlainName(f.name)) {
      problems.push({ _tag: 'Missing', file: f.name })
      continue
    }
    const kind = await entryKind(join(dir, f.name))
    if (kind === 'absent') {
      problems.push({ _tag: 'Missing', file: f.name })
      continue
    }
    const actual = await hashRegular(join(dir, f.name))
    if (actual === null) {
      problems.push({ _tag: 'NotAFile', file: f.name })
      continue
    }
    if (actual !== f.sha256) problems.push({ _tag: 'Altered', file: f.name, expected: f.sha256, actual })
    checked.push(f.name)
  }
  for (const name of await readdir(dir)) if (!listed.has(name)) problems.push({ _tag: 'Unlisted', file: name })
  return E.right({ manifestSha256: sha256(manifestText), checked, signature, problems })
}
