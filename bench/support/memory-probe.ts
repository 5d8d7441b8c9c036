// A diagnosis hook for any node process (`NODE_OPTIONS="--import <this file>"`): with
// MEMORY_PROBE_FILE set it appends one JSON line of process.memoryUsage() (MiB: rss, heapTotal,
// heapUsed, external, arrayBuffers) plus V8's heap spaces every MEMORY_PROBE_MS (default 1000), and on
// SIGUSR2 writes a heap snapshot beside the file (with --heapsnapshot-signal Node does that itself;
// this adds a line saying when). Used by bench/memory.ts to tell native memory from JavaScript objects.
// Not a SATANG_* variable: satang refuses those it does not know, and this is no setting of satang's.
import { appendFileSync } from 'node:fs'
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8'

const file = process.env['MEMORY_PROBE_FILE']
if (file !== undefined && file !== '') {
  const mib = (n: number): number => Math.round((n / 2 ** 20) * 10) / 10
  const every = Number(process.env['MEMORY_PROBE_MS'] ?? '1000')
  const started = Date.now()
  const line = (extra: Record<string, unknown> = {}): void => {
    const m = process.memoryUsage()
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, mib(s.space_used_size)]))
    appendFileSync(file, `${JSON.stringify({ at: (Date.now() - started) / 1000, rss: mib(m.rss), heapTotal: mib(m.heapTotal), heapUsed: mib(m.heapUsed), external: mib(m.external), arrayBuffers: mib(m.arrayBuffers), spaces, ...extra })}\n`)
  }
  setInterval(line, every).unref()
  process.on('SIGUSR2', () => {
    const path = writeHeapSnapshot(`${file}.${String(Date.now())}.heapsnapshot`)
    line({ snapshot: path })
  })
}
