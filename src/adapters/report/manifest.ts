import { createHash } from 'node:crypto'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { JsonObject } from '../../domain/events/envelope.ts'

/*
 * A report folder (`--out DIR`) and its `manifest.json`: each file's SHA-256 and size, and what the
 * report was built from (run ids, log positions, the command that rebuilds it), so an auditor can
 * later show the files were not altered (`satang report verify DIR`) and build the report again.
 */

export const MANIFEST = 'manifest.json'
export const MANIFEST_FORMAT = 'satang-report-manifest-v1'

export type ReportFile = { readonly name: string; readonly content: string }

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex')

const ManifestCodec = t.type({
  format: t.literal(MANIFEST_FORMAT),
  files: t.array(t.type({ name: t.string, sha256: t.string, bytes: t.number })),
})

/** Writes the files and their manifest into `dir` (created if missing); returns the manifest's own SHA-256. */
export const writeReportDir = async (dir: string, files: ReadonlyArray<ReportFile>, about: JsonObject): Promise<{ readonly manifestSha256: string; readonly files: ReadonlyArray<string> }> => {
  await mkdir(dir, { recursive: true })
  const entries: Array<{ name: string; sha256: string; bytes: number }> = []
  for (const f of files) {
    if (f.name === MANIFEST || f.name.includes('/') || f.name.includes('\\')) throw new Error(`report file name ${f.name} is not allowed`)
    const data = Buffer.from(f.content, 'utf8')
    await writeFile(join(dir, f.name), data)
    entries.push({ name: f.name, sha256: sha256(data), bytes: data.length })
  }
  const manifest = `${JSON.stringify({ format: MANIFEST_FORMAT, ...about, files: entries }, null, 2)}\n`
  await writeFile(join(dir, MANIFEST), manifest)
  return { manifestSha256: sha256(manifest), files: [...entries.map((e) => e.name), MANIFEST] }
}

export type VerifyProblem =
  | { readonly _tag: 'Altered'; readonly file: string; readonly expected: string; readonly actual: string }
  | { readonly _tag: 'Missing'; readonly file: string }
  | { readonly _tag: 'Unlisted'; readonly file: string }

export type Verified = { readonly manifestSha256: string; readonly checked: ReadonlyArray<string>; readonly problems: ReadonlyArray<VerifyProblem> }

/** Checks every file the manifest lists against its SHA-256, and lists files it does not name. Left: no readable manifest. */
export const verifyReportDir = async (dir: string): Promise<E.Either<string, Verified>> => {
  let manifestText: Buffer
  try {
    manifestText = await readFile(join(dir, MANIFEST))
  } catch {
    return E.left(`no ${MANIFEST} in ${dir}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(manifestText.toString('utf8'))
  } catch {
    return E.left(`${join(dir, MANIFEST)} is not valid JSON`)
  }
  const manifest = ManifestCodec.decode(parsed)
  if (E.isLeft(manifest)) return E.left(`${join(dir, MANIFEST)} is not a ${MANIFEST_FORMAT} manifest`)
  const problems: VerifyProblem[] = []
  const checked: string[] = []
  const listed = new Set<string>([MANIFEST])
  for (const f of manifest.right.files) {
    listed.add(f.name)
    if (f.name.includes('/') || f.name.includes('\\') || f.name === '..') {
      problems.push({ _tag: 'Missing', file: f.name })
      continue
    }
    let data: Buffer
    try {
      data = await readFile(join(dir, f.name))
    } catch {
      problems.push({ _tag: 'Missing', file: f.name })
      continue
    }
    const actual = sha256(data)
    if (actual !== f.sha256) problems.push({ _tag: 'Altered', file: f.name, expected: f.sha256, actual })
    checked.push(f.name)
  }
  for (const name of await readdir(dir)) if (!listed.has(name)) problems.push({ _tag: 'Unlisted', file: name })
  return E.right({ manifestSha256: sha256(manifestText), checked, problems })
}
