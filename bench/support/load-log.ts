// A loader of the bench's event log, as a process of its own (two run side by side): generates chunks
// `first`, `first + stride`, … (bench/support/event-log.ts) and writes each into the event table, and
// into the bare table too when asked, until it has written at least `events` events. Prints a progress
// line per chunk on stderr and, at the end, one JSON line: { events, chunks, lastChunk, seconds }.
//   node bench/support/load-log.ts <databaseUrl> <first> <stride> <events> <withBare: yes|no>
//   node bench/support/load-log.ts <databaseUrl> checkouts <from> <count>
import pg from 'pg'
import { BARE_TABLE, EVENT_TABLE } from './databases.ts'
import { checkoutRows, chunkRows, insertRows } from './event-log.ts'

const [url, firstText, strideText, eventsText, bareText] = process.argv.slice(2)
if (url === undefined || firstText === undefined || strideText === undefined || eventsText === undefined) {
  process.stderr.write('usage: load-log.ts <databaseUrl> <first> <stride> <events> <yes|no>  |  load-log.ts <databaseUrl> checkouts <from> <count>\n')
  process.exit(2)
}
const pool = new pg.Pool({ connectionString: url, max: 2, application_name: 'satang-bench-loader' })
const started = performance.now()
if (firstText === 'checkouts') {
  const from = Number(strideText)
  const count = Number(eventsText)
  let written = 0
  for (let n = from; n < from + count; n += 2_000) {
    const rows = checkoutRows(n, Math.min(2_000, from + count - n))
    await insertRows(pool, EVENT_TABLE, rows)
    written += rows.length
  }
  await pool.end()
  process.stdout.write(`${JSON.stringify({ events: written, seconds: (performance.now() - started) / 1000 })}\n`)
} else {
  const target = Number(eventsText)
  const stride = Number(strideText)
  let written = 0
  let chunk = Number(firstText)
  let chunks = 0
  let last = chunk
  while (written < target) {
    const rows = chunkRows(chunk)
    await insertRows(pool, EVENT_TABLE, rows)
    if (bareText === 'yes') await insertRows(pool, BARE_TABLE, rows)
    written += rows.length
    chunks += 1
    last = chunk
    chunk += stride
    process.stderr.write(`loaded ${String(written)}\n`)
  }
  await pool.end()
  process.stdout.write(`${JSON.stringify({ events: written, chunks, lastChunk: last, seconds: (performance.now() - started) / 1000 })}\n`)
}
