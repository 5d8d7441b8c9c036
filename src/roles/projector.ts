import { Gauge, Histogram, type Registry } from 'prom-client'
import { scrapedCounter } from '../adapters/http/scraped-counter.ts'
import { tracedProjectorBatch } from '../adapters/telemetry/traced-batches.ts'
import type { EventStore } from '../application/ports/event-store.ts'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA, projectionStatus, startProjector, type Projector } from '../projections/index.ts'
import { withEventTable, type Database } from '../composition/database.ts'
import type { HealthCheck } from '../adapters/http/server.ts'
import type { ProcessContext, StartedRole } from './role.ts'

/** Projection lag on `/metrics` (`satang_projection_*`), read from the checkpoints at each scrape. */
export const registerProjectionMetrics = (registry: Registry, store: EventStore, db: Database, log: Logger): void => {
  let cached: { at: number; value: Promise<Awaited<ReturnType<typeof projectionStatus>>> } | undefined
  const statuses = async (): Promise<Awaited<ReturnType<typeof projectionStatus>>> => {
    const now = Date.now()
    if (cached === undefined || now - cached.at > 1000) cached = { at: now, value: projectionStatus(store, db.pool, READ_MODEL_SCHEMA, PROJECTIONS) }
    return cached.value.catch((e: unknown) => {
      log.warn({ err: e }, 'projection status unavailable for /metrics')
      return []
    })
  }
  const gauge = (name: string, help: string, value: (s: Awaited<ReturnType<typeof projectionStatus>>[number]) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['projection'],
      registers: [registry],
      async collect() {
        for (const s of await statuses()) this.set({ projection: s.name }, value(s))
      },
    })
  }
  gauge('satang_projection_lag_events', 'events in the log after the projection checkpoint (capped at 1,000,000)', (s) => s.eventsBehind)
  gauge('satang_projection_lag_seconds', 'age of the oldest event the projection has not applied (0 when caught up)', (s) => s.secondsBehind)
  scrapedCounter(registry, { name: 'satang_projection_events_applied_total', help: 'events applied by the projection since it was built (a rebuild starts it again)', labelNames: ['projection'] }, async () =>
    (await statuses()).map((s) => ({ labels: { projection: s.name }, value: s.eventsApplied })),
  )
  gauge('satang_projection_failed', '1 when the projection stopped on an event it cannot apply (see satang project --status)', (s) => (s.state === 'failed' ? 1 : 0))
}

/** Seconds: a batch is one transaction per projection, from one event to SATANG_PROJECTOR_BATCH_SIZE. */
const BATCH_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** The projector over every read model, as `satang up` and `satang project` run it (measured on `metrics` when given). */
export const runProjector = (config: Config, store: EventStore, db: Database, log: Logger, metrics?: Registry): Projector => {
  const batchDuration =
    metrics === undefined
      ? undefined
      : new Histogram({
          name: 'satang_projector_batch_duration_seconds',
          help: "time to apply one batch of events to one projection and commit it, by projection",
          labelNames: ['projection'],
          buckets: BATCH_BUCKETS,
          registers: [metrics],
        })
  const aroundBatch = tracedProjectorBatch()
  const crash = config.SATANG_FAULT_CRASH_AFTER === 'ProjectionBatch'
  if (crash) log.warn('SATANG_FAULT_CRASH_AFTER=ProjectionBatch: this process kills itself in the middle of the third projector batch (tests only)')
  // Progress of long catch-ups: what each projection applied, every 10 s while it applies anything.
  const applied = new Map<string, number>()
  let lastReport = Date.now()
  const onApplied = (projection: string, events: number, ms: number): void => {
    batchDuration?.observe({ projection }, ms / 1000)
    applied.set(projection, (applied.get(projection) ?? 0) + events)
    const now = Date.now()
    if (now - lastReport < 10_000) return
    const seconds = (now - lastReport) / 1000
    lastReport = now
    const perProjection = Object.fromEntries(applied)
    applied.clear()
    if (Object.values(perProjection).some((n) => n > 0)) log.info({ applied: perProjection, seconds: Math.round(seconds) }, 'projector progress: events applied per projection')
  }
  return startProjector(
    {
      store,
      pool: db.pool,
      log,
      onApplied,
      ...(aroundBatch === undefined ? {} : { aroundBatch }),
      ...(crash
        ? {
            crashHook: (projection: string, batch: number) => {
              if (batch < 3) return
              log.warn({ projection, batch }, 'SATANG_FAULT_CRASH_AFTER=ProjectionBatch: killing the process before this projection commits')
              process.kill(process.pid, 'SIGKILL')
            },
          }
        : {}),
    },
    { schema: READ_MODEL_SCHEMA, projections: PROJECTIONS, batchSize: config.SATANG_PROJECTOR_BATCH_SIZE, ...withEventTable(config) },
  )
}

/**
 * `/readyz` of the projector role: its reader follows the log, no projection is stopped on an event it
 * cannot apply, and none is more than `SATANG_READY_MAX_LAG_SECONDS` behind.
 */
export const projectorReadiness = (deps: { readonly projector: Pick<Projector, 'failing'>; readonly store: EventStore; readonly db: Database; readonly maxLagSeconds: number }): HealthCheck => ({
  name: 'projections',
  check: async () => {
    const failing = deps.projector.failing()
    if (failing !== null) return failing
    const statuses = await projectionStatus(deps.store, deps.db.pool, READ_MODEL_SCHEMA, PROJECTIONS)
    const problems = statuses.flatMap((s) =>
      s.state === 'failed'
        ? [`projection ${s.name} stopped on an error: ${s.failure?.message ?? 'unknown'} (satang project --status; fix, then satang project --rebuild ${s.name} or restart)`]
        : s.state === 'not_migrated'
          ? [`projection ${s.name} has no checkpoint yet (migrations not applied)`]
          : s.secondsBehind > deps.maxLagSeconds
            ? [`projection ${s.name} is ${s.secondsBehind.toFixed(0)} s behind the log (more than SATANG_READY_MAX_LAG_SECONDS=${String(deps.maxLagSeconds)})`]
            : [],
    )
    return problems.length === 0 ? null : problems.join('; ')
  },
})

/** The projector role: keeps every read model current (unless `SATANG_PROJECTOR=off`). */
export const startProjectorRole = (ctx: ProcessContext): StartedRole => {
  const { config, log } = ctx
  const on = config.SATANG_PROJECTOR === 'on'
  const projector = on ? runProjector(config, ctx.store, ctx.db, log, ctx.metrics) : undefined
  return {
    role: 'projector',
    routes: [],
    checks: [],
    readiness: projector === undefined ? [] : [projectorReadiness({ projector, store: ctx.store, db: ctx.db, maxLagSeconds: config.SATANG_READY_MAX_LAG_SECONDS })],
    listening: () => undefined,
    summary: () => [
      on
        ? `read models in schema satang, kept current by the projector: ${PROJECTIONS.map((p) => p.name).join(', ')} (lag: satang project --status)`
        : 'projector off (SATANG_PROJECTOR=off): run satang project to keep the read models current',
    ],
    stop: async () => projector?.stop(),
  }
}

/** The projections a projector role keeps current in this process (none when SATANG_PROJECTOR=off). */
export const projectionsRunBy = (config: Pick<Config, 'SATANG_PROJECTOR'>): ReadonlyArray<string> => (config.SATANG_PROJECTOR === 'on' ? PROJECTIONS.map((p) => p.name) : [])
