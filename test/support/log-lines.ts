import { Writable } from 'node:stream'
import { makeLogger, type Logger } from '../../src/logger.ts'

/** A logger at `level` whose output lines are kept in `lines`, for tests that assert what was logged. */
export const capturingLogger = (level: 'debug' | 'info' | 'warn' | 'error' = 'warn'): { readonly log: Logger; readonly lines: string[] } => {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString())
      done()
    },
  })
  return { log: makeLogger({ level }, sink), lines }
}
