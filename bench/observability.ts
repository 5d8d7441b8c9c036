// Observability figures (issue 25): what the per-request instrumentation costs on a request path like
// the notification's (a small POST answered from memory, so the instrumentation is not hidden behind a
// database round trip). Three servers in this process, measured alternately over keep-alive with 16
// requests in flight: bare fastify (the baseline), satang's instrumentation with tracing off (the
// default: the duration histogram and one access-log line per request, written to /dev/null), and the
// same with tracing on (a span per request, sent over OTLP/HTTP protobuf to a receiver that discards).
import { createServer } from 'node:http'
import { openSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import { Registry } from 'prom-client'
import { pino } from 'pino'
import { observeRequests } from '../src/adapters/http/request-observer.ts'
import { startTracing } from '../src/composition/tracing.ts'
import { silentLogger } from '../src/logger.ts'
import type { BenchContext, BenchResult } from './types.ts'
import { percentile, rateRatio, latencyRatio, round } from './support/stats.ts'

const CONCURRENCY = 16

const app = (instrumented: boolean): FastifyInstance => {
  const a = Fastify({ logger: false })
  if (instrumented) observeRequests(a, { log: pino({ level: 'info' }, pino.destination(openSync('/dev/null', 'w'))), metrics: new Registry() })
  a.post('/callbacks/notifications', async (request) => ({ code: 'SUCCESS', size: JSON.stringify(request.body).length }))
  return a
}

const load = async (url: string, n: number): Promise<{ rate: number; p99: number }> => {
  const body = JSON.stringify({ merchant_order_id: 'ORD-1', status: 'PS', order_amount: '42000', sign: 'x'.repeat(344) })
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next += 1
        const t = performance.now()
        const res = await fetch(`${url}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        await res.arrayBuffer()
        latencies.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((x, y) => x - y)
  return { rate: n / seconds, p99: percentile(latencies, 99) }
}

export const run = async (ctx: BenchContext): Promise<ReadonlyArray<BenchResult>> => {
  const n = Math.max(500, ctx.sizes.notifications)
  const rounds = Math.max(2, ctx.sizes.rounds)
  const receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()))
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  const figures: Record<'bare' | 'off' | 'on', Array<{ rate: number; p99: number }>> = { bare: [], off: [], on: [] }
  const measure = async (kind: 'bare' | 'off' | 'on'): Promise<void> => {
    const tracing = kind === 'on' ? await startTracing({ url: `http://127.0.0.1:${String((receiver.address() as AddressInfo).port)}/v1/traces`, protocol: 'http/protobuf', serviceName: 'bench', serviceVersion: '0', sampler: 'always_on', samplerRatio: 1, resourceAttributes: {}, scheduleDelayMs: 200 }, silentLogger()) : undefined
    const a = app(kind !== 'bare')
    const url = await a.listen({ host: '127.0.0.1', port: 0 })
    await load(url, 200) // warm-up
    figures[kind].push(await load(url, n))
    await a.close()
    await tracing?.shutdown()
  }
  for (let r = 0; r < rounds; r++) {
    ctx.progress(`observability: round ${String(r + 1)} of ${String(rounds)} (${String(n)} requests per server)`)
    for (const kind of ['bare', 'off', 'on'] as const) await measure(kind)
  }
  receiver.close()
  const best = (kind: 'bare' | 'off' | 'on'): { rate: number; p99: number } => ({ rate: Math.max(...figures[kind].map((f) => f.rate)), p99: Math.min(...figures[kind].map((f) => f.p99)) })
  const bare = best('bare')
  const off = best('off')
  const on = best('on')
  const baseline = { name: 'bare fastify, same route', value: round(bare.rate) }
  return [
    { name: 'requests/s, access log + histogram, tracing off (the default)', value: round(off.rate), unit: 'requests/s', baseline, ratio: rateRatio(off.rate, bare.rate), targets: [{ on: 'ratio', op: '>=', value: 0.85 }] },
    { name: 'p99, tracing off', value: round(off.p99, 2), unit: 'ms', baseline: { name: 'bare fastify p99', value: round(bare.p99, 2) }, ratio: latencyRatio(off.p99, bare.p99) },
    { name: 'requests/s, tracing on (a span per request, OTLP protobuf)', value: round(on.rate), unit: 'requests/s', baseline, ratio: rateRatio(on.rate, bare.rate) },
    { name: 'p99, tracing on', value: round(on.p99, 2), unit: 'ms', baseline: { name: 'bare fastify p99', value: round(bare.p99, 2) }, ratio: latencyRatio(on.p99, bare.p99) },
  ]
}
