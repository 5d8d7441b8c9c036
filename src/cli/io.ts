// Loaded when a command reads a file: `satang --help` loads nothing but the command list and this module.
const boundedRead = () => import('../adapters/os/bounded-read.ts')

/** A command-line failure the user can fix: printed as one clear message, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** Exit codes: 0 ok, 1 a negative answer (e.g. signature invalid), 2 bad input or usage, 3 runtime failure. */
export const EXIT = { ok: 0, negative: 1, usage: 2, failure: 3 } as const

/** At most `maxBytes` of stdin, as text; a usage error when there is more. */
export const readStdin = async (maxBytes: number): Promise<string> => {
  if (process.stdin.isTTY) throw new UsageError('no input: pipe the fields as a JSON object on stdin, or give --fields FILE')
  const { formatBytes, readStreamBounded } = await boundedRead()
  const read = await readStreamBounded(process.stdin, maxBytes)
  if (read._tag === 'Left') throw new UsageError(`the fields on stdin are more than the ${formatBytes(read.left.maxBytes)} satang reads of them`)
  return read.right.toString('utf8')
}

/** The text of `path`, at most `maxBytes` of it (READ_LIMITS); a usage error naming the file and the rule otherwise. */
export const readTextFile = async (path: string, what: string, maxBytes: number): Promise<string> => {
  const { FileTooLarge, readFailureText, readTextBounded } = await boundedRead()
  try {
    return await readTextBounded(path, maxBytes)
  } catch (e) {
    if (e instanceof FileTooLarge) throw new UsageError(`${what} ${JSON.stringify(path)} ${e.message}`)
    throw new UsageError(`cannot read ${what} ${JSON.stringify(path)}: ${readFailureText(e)}`)
  }
}

/** Reads a JSON object of fields from `--fields FILE` or stdin; anything but an object is a usage error. */
export const readFieldsJson = async (fieldsFile: string | undefined): Promise<Record<string, unknown>> => {
  const source = fieldsFile === undefined ? 'stdin' : JSON.stringify(fieldsFile)
  const { READ_LIMITS } = await boundedRead()
  const text = fieldsFile === undefined ? await readStdin(READ_LIMITS.fields) : await readTextFile(fieldsFile, 'fields file', READ_LIMITS.fields)
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
