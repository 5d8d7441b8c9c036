import { Gauge, type Registry } from 'prom-client'
import type { Relay, RelayErrorKind, RelayStatus } from '../../jobs/index.ts'
import type { Logger } from '../../logger.ts'
import { scrapedCounter } from './scraped-counter.ts'

const ERROR_KINDS: ReadonlyArray<RelayErrorKind> = ['unreachable', 'topic', 'rejected', 'timeout', 'authentication', 'tls', 'database', 'event_log', 'undecodable_event']

/**
 * The relay on `/metrics` (`satang_relay_*`): lag in events and seconds and events published (from its
 * checkpoint, whichever process publishes), this process's role, and its last error. The publish rate
 * is `rate(satang_relay_events_published_total[5m])`.
 */
export const registerRelayMetrics = (registry: Registry, relay: Relay, log: Logger): void => {
  let cached: { at: number; value: Promise<RelayStatus | undefined> } | undefined
  const status = async (): Promise<RelayStatus | undefined> => {
    const now = Date.now()
    if (cached === undefined || now - cached.at > 1000) {
      cached = {
        at: now,
        value: relay.status().catch((e: unknown) => {
          log.warn({ err: e }, 'relay status unavailable for /metrics')
          return undefined
        }),
      }
    }
    return cached.value
  }
  const topic = relay.runtime().topic
  const fromStatus = (name: string, help: string, value: (s: RelayStatus) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['topic'],
      registers: [registry],
      async collect() {
        const s = await status()
        if (s !== undefined) this.set({ topic }, value(s))
      },
    })
  }
  const fromRuntime = (name: string, help: string, value: (r: ReturnType<Relay['runtime']>) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['topic'],
      registers: [registry],
      collect() {
        this.set({ topic }, value(relay.runtime()))
      },
    })
  }
  fromStatus('satang_relay_lag_events', 'events in the log after the relay checkpoint (capped at 1,000,000)', (s) => s.eventsBehind)
  fromStatus('satang_relay_lag_seconds', 'age of the oldest event not yet acknowledged by the broker (0 when caught up)', (s) => s.secondsBehind)
  scrapedCounter(registry, { name: 'satang_relay_events_published_total', help: 'events acknowledged by the broker for this topic since the relay first ran (all processes; from the checkpoint)', labelNames: ['topic'] }, async () => {
    const s = await status()
    return s === undefined ? undefined : [{ labels: { topic }, value: s.eventsPublished }]
  })
  fromRuntime('satang_relay_leader', '1 when this process holds the relay lock and publishes, 0 when it stands by', (r) => (r.role === 'leader' ? 1 : 0))
  fromRuntime('satang_relay_failing', '1 while the last attempt of this process failed and it waits to retry (see satang_relay_last_error_timestamp_seconds)', (r) => (r.failing ? 1 : 0))
  new Gauge({
    name: 'satang_relay_last_error_timestamp_seconds',
    help: 'when this process last failed to publish, by kind of error (unreachable, topic, rejected, timeout, database, event_log, undecodable_event); 0 never',
    labelNames: ['topic', 'kind'],
    registers: [registry],
    collect() {
      const last = relay.runtime().lastError
      for (const kind of ERROR_KINDS) this.set({ topic, kind }, last !== null && last.kind === kind ? last.at.getTime() / 1000 : 0)
    },
  })
}
