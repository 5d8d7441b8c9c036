// The load generator of the console bench, in a process of its own: GETs `path` `count` times, one after
// the other (each answer's latency is what a person waits), with the session cookie, over keep-alive.
// Prints one JSON line: { requests, failures, p50_ms, p99_ms, max_ms, bytes }.
//   node bench/support/page-load.ts <baseUrl> <path> <cookie> <count>
const [base, path, cookie, countText] = process.argv.slice(2)
if (base === undefined || path === undefined || cookie === undefined || countText === undefined) {
  process.stderr.write('usage: page-load.ts <baseUrl> <path> <cookie> <count>\n')
  process.exit(2)
}
const latencies: number[] = []
let failures = 0
let bytes = 0
for (let i = 0; i < Number(countText); i++) {
  const started = performance.now()
  const res = await fetch(`${base}${path}`, { headers: { cookie } })
  const body = await res.text()
  latencies.push(performance.now() - started)
  bytes = body.length
  if (res.status !== 200) failures += 1
}
latencies.sort((a, b) => a - b)
const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0
process.stdout.write(`${JSON.stringify({ requests: latencies.length, failures, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: latencies.at(-1) ?? 0, bytes })}\n`)
