import { readFile } from 'node:fs/promises'

/** A command-line failure the user can fix: printed as one clear message, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** Exit codes: 0 ok, 1 a negative answer (e.g. signature invalid), 2 bad input or usage, 3 runtime failure. */
export const EXIT = { ok: 0, negative: 1, usage: 2, failure: 3 } as const

export const readStdin = async (): Promise<string> => {
  if (process.stdin.isTTY) throw new UsageError('no input: pipe the fields as a JSON object on stdin, or give --fields FILE')
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array))
  return Buffer.concat(chunks).toString('utf8')
}

export const readTextFile = async (path: string, what: string): Promise<string> => {
  try {
    return await readFile(path, 'utf8')
  } catch (e) {
    const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : 'unreadable'
    throw new UsageError(`cannot read ${what} ${JSON.stringify(path)}: ${code === 'ENOENT' ? 'no such file' : code}`)
  }
}

/** Reads a JSON object of fields from `--fields FILE` or stdin; anything but an object is a usage error. */
export const readFieldsJson = async (fieldsFile: string | undefined): Promise<Record<string, unknown>> => {
  const source = fieldsFile === undefined ? 'stdin' : JSON.stringify(fieldsFile)
  const text = fieldsFile === undefined ? await readStdin() : await readTextFile(fieldsFile, 'fields file')
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    throw new UsageError(`fields from ${source} are not valid JSON: ${e instanceof Error ? e.message : 'parse error'}`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`fields from ${source} must be a JSON object of field names to values, got ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed}`)
  }
  return { ...parsed }
}

/** Resolves with the signal once SIGINT (Ctrl-C) or SIGTERM arrives, after printing `satang: SIGTERM: stopping <what>…`. */
export const untilStopSignal = (what: string): Promise<NodeJS.Signals> =>
  new Promise((done) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.stdout.write(`satang: ${signal}: stopping ${what}…\n`)
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      done(signal)
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
