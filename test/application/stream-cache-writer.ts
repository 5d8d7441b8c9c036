/**
 * A writer process for the stream cache's multi-process test: its own pool, its own stream cache (0 = no
 * cache), and two concurrent loops that handle the given commands on one stream of the numbered tally.
 * Prints `ready`, waits for a line on stdin, works, prints one JSON line of counts, exits. `appended`
 * counts commands answered with events (two processes deciding the same key on the same state both
 * are: the second finds the identical batch stored); `wrote` counts appends that stored something.
 *
 *   node test/application/stream-cache-writer.ts <databaseUrl> <schema> <stream> <cacheSize> <key[>needs],…>
 */
import { createInterface } from 'node:readline'
import * as E from 'fp-ts/lib/Either.js'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { handleCommand } from '../../src/application/command-handler.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { makeStreamCache } from '../../src/application/stream-cache.ts'
import { silentLogger } from '../../src/logger.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { numberedTally, tallyCodec, type TallyCommand, type TallyState } from './numbered-tally.ts'

const [url, schema, stream, sizeText, list] = process.argv.slice(2)
if (url === undefined || schema === undefined || stream === undefined || sizeText === undefined || list === undefined) {
  process.stderr.write('usage: stream-cache-writer.ts <databaseUrl> <schema> <stream> <cacheSize> <key[>needs],…>\n')
  process.exit(2)
}
const commands: TallyCommand[] = list.split(',').map((item) => {
  const [key = '', needs] = item.split('>')
  return { key, needs }
})
const log = silentLogger()
const pool = makePostgresPool({ url, poolMax: 2 }, log)
const inner = makePostgresEventStore({ pool, log }, { schema })
const counts = { appended: 0, nothing: 0, rejected: 0, wrongExpectedVersion: 0, reads: 0, wrote: 0 }
const store: EventStore = {
  ...inner,
  readStream: (s, o) => {
    counts.reads += 1
    return inner.readStream(s, o)
  },
  append: (s, events, expected) => async () => {
    const r = await inner.append(s, events, expected)()
    if (E.isLeft(r) && r.left._tag === 'WrongExpectedVersion') counts.wrongExpectedVersion += 1
    // Written by this process (not found stored already, as another process's identical decision).
    if (E.isRight(r) && r.right.alreadyStored !== true) counts.wrote += 1
    return r
  },
}
const cache = makeStreamCache(Number(sizeText))
const states = cache.scope<TallyState>()
const codec = tallyCodec(stream)

process.stdout.write('ready\n')
await new Promise<void>((resolve) => {
  const lines = createInterface({ input: process.stdin })
  lines.once('line', () => {
    lines.close()
    process.stdin.destroy()
    resolve()
  })
})

let next = 0
const loop = async (): Promise<void> => {
  for (let i = next++; i < commands.length; i = next++) {
    const c = commands[i]
    if (c === undefined) continue
    const r = await handleCommand(store, stream, numberedTally, codec, () => c, { cache: states, maxAttempts: 1_000 })()
    if (E.isLeft(r)) {
      if (r.left._tag !== 'Rejected') throw new Error(`command ${c.key} failed: ${r.left._tag}`)
      counts.rejected += 1
    } else if (r.right.appended.length > 0) counts.appended += 1
    else counts.nothing += 1
  }
}
await Promise.all([loop(), loop()])
process.stdout.write(`${JSON.stringify({ ...counts, ...cache.stats() })}\n`)
await inner.close()
await pool.end()
