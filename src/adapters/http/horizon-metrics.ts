import { Gauge, type Registry } from 'prom-client'
import type { Pool } from 'pg'
import { horizonHolders, type HorizonHolder } from '../eventstore/postgres-horizon.ts'
import type { Logger } from '../../logger.ts'

/**
 * The PostgreSQL event store's horizon (the log in `schema`) on `/metrics` (`satang_eventstore_horizon_*`): how long the
 * oldest append transaction still in flight has been open (what every reader of the global order
 * waits for), and how many are in flight. Read at each scrape, at most once a second.
 */
export const registerHorizonMetrics = (registry: Registry, pool: Pool, schema: string, log: Logger): void => {
  let cached: { at: number; value: Promise<ReadonlyArray<HorizonHolder> | undefined> } | undefined
  const holders = async (): Promise<ReadonlyArray<HorizonHolder> | undefined> => {
    const now = Date.now()
    if (cached === undefined || now - cached.at > 1000) {
      cached = {
        at: now,
        value: horizonHolders(pool, schema).catch((e: unknown) => {
          log.warn({ err: e }, 'event store horizon unavailable for /metrics')
          return undefined
        }),
      }
    }
    return cached.value
  }
  new Gauge({
    name: 'satang_eventstore_horizon_age_seconds',
    help: 'seconds the oldest append transaction still in flight has been open: readers of the global order (projector, relay, subscribers) wait for it (0 when none)',
    registers: [registry],
    async collect() {
      const h = await holders()
      if (h !== undefined) this.set(h[0]?.openSeconds ?? 0)
    },
  })
  new Gauge({
    name: 'satang_eventstore_horizon_appenders',
    help: 'append transactions in flight that readers of the global order wait for',
    registers: [registry],
    async collect() {
      const h = await holders()
      if (h !== undefined) this.set(h.length)
    },
  })
}
