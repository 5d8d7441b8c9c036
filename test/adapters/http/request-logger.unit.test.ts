import type { FastifyBaseLogger } from 'fastify'
import { describe, expect, it } from 'vitest'
import { lazyRequestLogger } from '../../../src/adapters/http/request-logger.ts'
import { makeHttpServer, makeMetricsRegistry } from '../../../src/adapters/http/server.ts'
import { capturingLogger } from '../../support/log-lines.ts'

/** A logger whose `child` calls are counted (the request loggers made). */
const counted = (log: FastifyBaseLogger): { readonly log: FastifyBaseLogger; readonly children: () => number } => {
  let children = 0
  const proxy = new Proxy(log, {
    get: (target, key, receiver) => {
      if (key === 'child') {
        return (...args: Parameters<FastifyBaseLogger['child']>) => {
          children += 1
          return target.child(...args)
        }
      }
      const value: unknown = Reflect.get(target, key, receiver)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  return { log: proxy, children: () => children }
}

const withoutTime = (line: string | undefined): Record<string, unknown> => {
  const parsed = JSON.parse(line ?? '{}') as Record<string, unknown>
  delete parsed['time']
  return parsed
}

describe('request loggers made when a request first logs (issue 28: nothing done per request that is not needed)', () => {
  it('makes no child for a request that logs nothing or only below the level; a line it does log is the one an eager child writes, redaction included', () => {
    const { log, lines } = capturingLogger('info')
    const parent = counted(log.child({ component: 'http' }))
    const quiet = Array.from({ length: 50 }, (_, i) => lazyRequestLogger(parent.log, { reqId: `r-${String(i)}` }, {}))
    for (const q of quiet) q.debug({ password: 'secret' }, 'below the level')
    expect(parent.children()).toBe(0)
    expect(lines).toEqual([])

    const lazy = lazyRequestLogger(parent.log, { reqId: 'r-lazy' }, {})
    lazy.warn({ password: 'secret', n: 1 }, 'a warning')
    lazy.error({ n: 2 }, 'an error')
    expect(parent.children()).toBe(1) // made once, at its first line
    const eager = log.child({ component: 'http' }).child({ reqId: 'r-lazy' })
    eager.warn({ password: 'secret', n: 1 }, 'a warning')
    eager.error({ n: 2 }, 'an error')
    expect(lines).toHaveLength(4)
    expect(withoutTime(lines[0])).toEqual(withoutTime(lines[2]))
    expect(withoutTime(lines[1])).toEqual(withoutTime(lines[3]))
    expect(withoutTime(lines[0])).toMatchObject({ reqId: 'r-lazy', component: 'http', password: '[redacted]', msg: 'a warning' })
    expect(lazy.level).toBe('info')
  })

  it('a route with logger options of its own (a level) gets its child at once', () => {
    const { log } = capturingLogger('info')
    const parent = counted(log)
    const child = lazyRequestLogger(parent.log, { reqId: 'r' }, { level: 'debug' })
    expect(parent.children()).toBe(1)
    expect(child.level).toBe('debug')
  })

  it('in the HTTP server (fastify\'s request.log): requests that log nothing write nothing; a line a request logs carries its request id and component', async () => {
    const { log, lines } = capturingLogger('info')
    const app = makeHttpServer({
      log,
      checks: [],
      metrics: makeMetricsRegistry(),
      version: 'test',
      routes: [
        (a) => {
          a.get('/fails', async (request, reply) => {
            request.log.error({ n: 1 }, 'the route failed')
            return reply.code(500).send({ error: 'x' })
          })
        },
      ],
    })
    try {
      for (let i = 0; i < 20; i++) expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
      expect(lines.filter((l) => l.includes('"reqId"'))).toEqual([])
      const failed = await app.inject({ method: 'GET', url: '/fails' })
      expect(failed.statusCode).toBe(500)
      const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['msg'] === 'the route failed')
      expect(line).toMatchObject({ reqId: failed.headers['x-request-id'], component: 'http', n: 1 })
    } finally {
      await app.close()
    }
  })
})
