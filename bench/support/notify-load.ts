// The gateway's side of the notification figures, as a process of its own: POSTs each pre-signed body
// of `bodies` (one JSON per line) to `<url>/callbacks/notifications` with `concurrency` in flight over
// keep-alive, and expects 200 `SUCCESS` — once each, or over and over until `minSeconds` have passed.
// Prints one JSON line: { sent, failures, firstFailure, seconds, p50_ms, p99_ms, max_ms }.
//   node bench/support/notify-load.ts <url> <bodies> <concurrency> [minSeconds]
import { readFileSync } from 'node:fs'
import { percentile } from './stats.ts'

const [url, file, concurrencyText, minSecondsText] = process.argv.slice(2)
if (url === undefined || file === undefined || concurrencyText === undefined) {
  process.stderr.write('usage: notify-load.ts <url> <bodies> <concurrency> [minSeconds]\n')
  process.exit(2)
}
const bodies = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '')
const minMs = Number(minSecondsText ?? '0') * 1000
const latencies: number[] = []
let failures = 0
let firstFailure: string | null = null
let next = 0
const started = performance.now()
const more = (): boolean => next < bodies.length || performance.now() - started < minMs
await Promise.all(
  Array.from({ length: Number(concurrencyText) }, async () => {
    while (more()) {
      const body = bodies[next++ % bodies.length] ?? ''
      const t0 = performance.now()
      const res = await fetch(`${url}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      const text = await res.text()
      latencies.push(performance.now() - t0)
      if (res.status !== 200 || text !== 'SUCCESS') {
        failures += 1
        firstFailure ??= `HTTP ${String(res.status)} ${text.slice(0, 300)}`
      }
    }
  }),
)
const seconds = (performance.now() - started) / 1000
latencies.sort((a, b) => a - b)
process.stdout.write(`${JSON.stringify({ sent: latencies.length, failures, firstFailure, seconds, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), max_ms: latencies.at(-1) ?? 0 })}\n`)
