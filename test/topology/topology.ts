import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { makeEsdbEventStore } from '../../src/adapters/eventstore/esdb.ts'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore, RecordedEvent } from '../../src/application/ports/event-store.ts'
import { bangkokDateOf, formatCalendarDate } from '../../src/domain/bangkok-time.ts'
import { readRelayStatus } from '../../src/jobs/index.ts'
import { silentLogger } from '../../src/logger.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { readCheckpoints } from '../../src/projections/checkpoints.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA, projectionStatus } from '../../src/projections/index.ts'
import { checkDelivery, readWholeLog, type DeliveryCheck } from '../e2e/relay-support.ts'
import { GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM, MERCHANT_PUBLIC_KEY_PEM } from '../sandbox/support.ts'
import { runCli, type CliResult } from '../support/cli.ts'
import { consumeTopic } from '../support/kafka.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings } from '../support/process.ts'
import { loadSigningVectors } from '../support/vectors.ts'
import { startBalancer } from './balancer.ts'
import { topologyDatabase, type TopologyClient, type TopologyDatabase } from './database.ts'
import { runLoad, type LoadResult } from './load.ts'
import { makeStack, type Stack } from './processes.ts'

/**
 * The production topology as real processes on this machine: `satang migrate`, two `api` processes
 * behind a round-robin balancer, a `projector`, two `relay`s and two `scheduler`s (one of each acts,
 * the other stands by), `satang sandbox` as the gateway, the real PostgreSQL and a real Kafka broker.
 * `runTopology` puts load through the balancer, SIGKILLs an api, the projector and the publishing
 * relay mid-load, starts them again, runs a reconciliation, and gathers what the test checks.
 */
export type StoreKind = { readonly kind: 'postgres' } | { readonly kind: 'eventstoredb'; readonly url: string }

export type TopologyOptions = {
  readonly store: StoreKind
  readonly brokers: ReadonlyArray<string>
  readonly orders: number
  readonly concurrency: number
  readonly log: (line: string) => void
}

/** What a kill cost: from the SIGKILL until the role worked again. */
export type Recovery = { readonly process: string; readonly what: string; readonly ms: number }

export type TopologyOutcome = {
  readonly load: LoadResult
  readonly balancerServed: ReadonlyArray<number>
  readonly balancer502s: number
  readonly log: ReadonlyArray<RecordedEvent>
  readonly delivery: DeliveryCheck
  readonly notifications: { readonly total: number; readonly acknowledged: ReadonlyArray<{ readonly kind: string; readonly fields: Readonly<Record<string, string>> }>; readonly unacknowledged: number }
  readonly kills: ReadonlyArray<string>
  readonly recoveries: ReadonlyArray<Recovery>
  /** Samples of each relay's `satang_relay_leader` gauge: how many had two leaders at once. */
  readonly relaySamples: { readonly samples: number; readonly bothLeading: number; readonly leadersSeen: ReadonlyArray<string> }
  /** When each relay/scheduler process took its lock (from its log), and when it was killed. */
  readonly leadership: ReadonlyArray<{ readonly process: string; readonly incarnation: number; readonly from: number; readonly to: number | null }>
  readonly schedulerLeaders: ReadonlyArray<string>
  readonly dailyRuns: number
  readonly reconcile: CliResult
  readonly verify: CliResult
  readonly auditVerify: CliResult | null
  readonly ordersRows: number
  readonly paidRows: number
  readonly timings: Readonly<Record<string, number>>
  readonly cleanup: () => Promise<void>
}

const TOKEN = 'topology-token-0123456789abcdefghijkl'

const sandboxKeyPem = (): string => loadSigningVectors().keys.gateway.private_key_pem

/** The leadership lines a relay or scheduler writes when it takes its lock. */
const LEADER_LINE = /"msg":"(relay lock taken: this process publishes|this process runs the reconciliation schedule)"/

const leaderSince = (stderr: string): number | null => {
  for (const line of stderr.split('\n')) {
    if (!LEADER_LINE.test(line)) continue
    const parsed: unknown = JSON.parse(line)
    if (typeof parsed === 'object' && parsed !== null && 'time' in parsed && typeof parsed.time === 'string') return Date.parse(parsed.time)
  }
  return null
}

const metric = async (port: number, name: string): Promise<number | null> => {
  const text = await fetch(`http://127.0.0.1:${String(port)}/metrics`, { signal: AbortSignal.timeout(2_000) }).then(
    (r) => r.text(),
    () => null,
  )
  const m = text === null ? null : new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)
  return m === null || m[1] === undefined ? null : Number(m[1])
}

export const runTopology = async (opts: TopologyOptions): Promise<TopologyOutcome> => {
  const t0 = Date.now()
  const timings: Record<string, number> = {}
  const mark = (name: string): void => {
    timings[name] = Date.now() - t0
  }
  const dir = mkdtempSync(join(tmpdir(), 'satang-topology-'))
  const files = {
    merchantKey: join(dir, 'merchant-private.pem'),
    merchantPublic: join(dir, 'merchant-public.pem'),
    gatewayPublic: join(dir, 'gateway-public.pem'),
    gatewayKey: join(dir, 'gateway-private.pem'),
  }
  writeFileSync(files.merchantKey, MERCHANT_PRIVATE_KEY_PEM, { mode: 0o600 })
  writeFileSync(files.merchantPublic, MERCHANT_PUBLIC_KEY_PEM)
  writeFileSync(files.gatewayPublic, GATEWAY_PUBLIC_KEY_PEM)
  writeFileSync(files.gatewayKey, sandboxKeyPem(), { mode: 0o600 })

  const db: TopologyDatabase = await topologyDatabase('topology')
  const stack: Stack = makeStack()
  const topic = `satang.topology.${randomUUID().slice(0, 8)}`
  const pools: Pool[] = []
  let store: EventStore | undefined
  let balancer: Awaited<ReturnType<typeof startBalancer>> | undefined
  const cleanup = async (): Promise<void> => {
    await stack.stopAll()
    await balancer?.close()
    await store?.close()
    for (const p of pools) await p.end()
    await db.drop()
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const sandboxPort = await freePort()
    const sandboxUrl = `http://127.0.0.1:${String(sandboxPort)}`
    const storeSettings: Record<string, string> = opts.store.kind === 'eventstoredb' ? { SATANG_EVENT_STORE: 'eventstoredb', SATANG_EVENTSTOREDB_URL: opts.store.url } : {}
    const envOf = (who: TopologyClient, extra: Record<string, string>): NodeJS.ProcessEnv =>
      envWithoutSatangSettings({
        SATANG_LOG_LEVEL: 'warn',
        SATANG_DATABASE_URL: db.urlFor(who),
        SATANG_DATA_DIR: mkdtempSync(join(dir, `${who}-`)),
        SATANG_GATEWAY_BASE_URL: sandboxUrl,
        SATANG_MERCHANT_ID: MERCHANT_ID,
        SATANG_MERCHANT_PRIVATE_KEY_FILE: files.merchantKey,
        SATANG_GATEWAY_PUBLIC_KEY_FILE: files.gatewayPublic,
        SATANG_GATEWAY_TIMEOUT_MS: '5000',
        ...storeSettings,
        ...extra,
      })

    // 1. the gateway (satang sandbox) and the schemas (satang migrate, a one-shot process)
    stack.start('sandbox', ['sandbox', '--port', String(sandboxPort), '--merchant', `${MERCHANT_ID}=${files.merchantPublic}`, '--gateway-private-key', files.gatewayKey, '--rate-limit', '0', '--log-level', 'warn', '--data-dir', join(dir, 'sandbox')], envWithoutSatangSettings())
    const migrated = await runCli(['migrate'], { env: envOf('migrate', {}) })
    if (migrated.code !== 0) throw new Error(`satang migrate exited ${String(migrated.code)}: ${migrated.stderr}`)
    mark('migrated')
    await stack.current('sandbox').proc.waitFor(/listening on/)

    // 2. the roles, each its own process
    const apiPorts = [await freePort(), await freePort()]
    const lb = await startBalancer(apiPorts)
    balancer = lb
    const apiEnv = (port: number): NodeJS.ProcessEnv =>
      envOf('api', { SATANG_HTTP_PORT: String(port), SATANG_API_TOKENS: `topology:${TOKEN}:payments:write+read+audit+reconcile:write`, SATANG_PUBLIC_URL: lb.url, SATANG_RESOLVE_BASE_MS: '200' })
    apiPorts.forEach((port, i) => stack.start(`api-${String(i + 1)}`, ['up', '--role', 'api'], apiEnv(port), port))
    stack.start('projector', ['up', '--role', 'projector'], envOf('projector', { SATANG_HTTP_PORT: String(await freePort()) }), undefined)
    const relayPorts = [await freePort(), await freePort()]
    const relayEnv = (port: number): NodeJS.ProcessEnv =>
      envOf('relay', { SATANG_LOG_LEVEL: 'info', SATANG_HTTP_PORT: String(port), SATANG_KAFKA_BROKERS: opts.brokers.join(','), SATANG_KAFKA_TOPIC: topic, SATANG_KAFKA_TOPIC_PARTITIONS: '3', SATANG_KAFKA_RETRY_BASE_MS: '100', SATANG_KAFKA_RETRY_MAX_MS: '1000' })
    relayPorts.forEach((port, i) => stack.start(`relay-${String(i + 1)}`, ['up', '--role', 'relay'], relayEnv(port), port))
    const schedulerEnv = (): NodeJS.ProcessEnv => envOf('scheduler', { SATANG_LOG_LEVEL: 'info', SATANG_HTTP_PORT: String(0), SATANG_RECONCILE_SWEEP_MINUTES: '1', SATANG_RECONCILE_SWEEP_MIN_AGE_MINUTES: '0' })
    stack.start('scheduler-1', ['up', '--role', 'scheduler'], schedulerEnv())
    stack.start('scheduler-2', ['up', '--role', 'scheduler'], schedulerEnv())
    const projectorProc = stack.processes.get('projector')
    if (projectorProc === undefined) throw new Error('no projector')
    for (const name of stack.processes.keys()) {
      if (name === 'sandbox') continue
      await stack.current(name).proc.waitFor(/Ctrl-C stops\./, 120_000)
    }
    mark('stack up')
    opts.log(`topology: stack up in ${String(timings['stack up'])} ms (migrate ${String(timings['migrated'])} ms)`)

    // The checks' own view: the database and the log.
    const pool = makePostgresPool({ url: db.adminUrl, poolMax: 4 }, silentLogger())
    pools.push(pool)
    store = opts.store.kind === 'eventstoredb' ? makeEsdbEventStore({ log: silentLogger() }, { connectionString: opts.store.url }) : makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
    const theStore = store

    // 3. watch the relays: which one leads, sampled all along
    let samples = 0
    let bothLeading = 0
    const leadersSeen = new Set<string>()
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        const leading = await Promise.all(relayPorts.map((p) => metric(p, 'satang_relay_leader')))
        samples += 1
        const names = leading.flatMap((v, i) => (v === 1 ? [`relay-${String(i + 1)}`] : []))
        if (names.length > 1) bothLeading += 1
        for (const n of names) leadersSeen.add(n)
        await sleep(200)
      }
    })()

    // 4. the load, with the kills a third of the way through
    const kills: string[] = []
    const recoveries: Recovery[] = []
    let killing: Promise<void> | undefined
    const killAndRestart = async (): Promise<void> => {
      const leader = (await metric(relayPorts[0] ?? 0, 'satang_relay_leader')) === 1 ? 'relay-1' : 'relay-2'
      const victims = ['api-1', 'projector', leader]
      const killedAt = new Map<string, number>()
      await Promise.all(
        victims.map(async (v) => {
          killedAt.set(v, await stack.kill(v))
          kills.push(v)
        }),
      )
      opts.log(`topology: SIGKILL ${victims.join(', ')} at ${String(Date.now() - t0)} ms`)
      // the standby relay takes over by itself
      const standby = leader === 'relay-1' ? relayPorts[1] : relayPorts[0]
      const takeoverFrom = killedAt.get(leader) ?? Date.now()
      for (;;) {
        if ((await metric(standby ?? 0, 'satang_relay_leader')) === 1) break
        if (Date.now() - takeoverFrom > 60_000) throw new Error('the standby relay did not take over within 60 s')
        await sleep(50)
      }
      recoveries.push({ process: leader, what: 'standby relay publishing (takeover)', ms: Date.now() - takeoverFrom })
      await sleep(500)
      for (const v of victims) stack.restart(v)
      const apiFrom = killedAt.get('api-1') ?? Date.now()
      await stack.healthy('api-1')
      recoveries.push({ process: 'api-1', what: 'killed → restarted → /healthz 200', ms: Date.now() - apiFrom })
      const projFrom = killedAt.get('projector') ?? Date.now()
      await stack.current('projector').proc.waitFor(/Ctrl-C stops\./, 120_000)
      recoveries.push({ process: 'projector', what: 'killed → restarted → running', ms: Date.now() - projFrom })
      // caught up again: every read model has applied the log as it stood when the projector was back
      const head = await theStore.headPosition()()
      if (E.isLeft(head)) throw new Error(`reading the log head failed (${head.left.operation})`)
      const target = head.right
      for (;;) {
        const checkpoints = await readCheckpoints(pool, READ_MODEL_SCHEMA, PROJECTIONS.map((p) => p.name))
        if (target === undefined || (checkpoints.size === PROJECTIONS.length && [...checkpoints.values()].every((c) => c.position !== null && c.position >= target))) break
        if (Date.now() - projFrom > 120_000) throw new Error('the restarted projector did not catch up within 120 s')
        await sleep(50)
      }
      recoveries.push({ process: 'projector', what: 'killed → restarted → read models caught up with the log', ms: Date.now() - projFrom })
      await stack.current(leader).proc.waitFor(/Ctrl-C stops\./, 120_000)
    }
    const load = await runLoad(
      { balancerUrl: lb.url, sandboxUrl, token: TOKEN, merchantId: MERCHANT_ID },
      {
        orders: opts.orders,
        concurrency: opts.concurrency,
        unpaidEvery: 5,
        refundEvery: 4,
        orderIdOf: (i) => `TOPO-${String(i)}`,
        refundIdOf: (i) => `TOPO-R-${String(i)}`,
        progress: (done) => {
          if (done === Math.floor(opts.orders / 3) && killing === undefined) killing = killAndRestart()
        },
      },
    )
    await killing
    mark('load done')
    opts.log(`topology: load done at ${String(timings['load done'])} ms: ${String(load.requests)} requests (${String(load.retries)} retried)`)

    // 5. every notification delivered (the sandbox retries what a killed api did not acknowledge)
    const waited = await fetch(`${sandboxUrl}/_sandbox/notifications/wait`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ timeoutMs: 120_000 }) })
    if (waited.status !== 200) throw new Error(`sandbox notifications still pending: ${String(waited.status)}`)
    const listed = (await (await fetch(`${sandboxUrl}/_sandbox/notifications`)).json()) as { notifications: ReadonlyArray<{ kind: string; fields: Record<string, string>; attempts: ReadonlyArray<{ acknowledged: boolean }> }> }
    const acknowledged = listed.notifications.filter((n) => n.attempts.some((a) => a.acknowledged))
    mark('notifications delivered')

    // 6. a reconciliation of today (Bangkok) by hand, beside the scheduler's
    const today = formatCalendarDate(bangkokDateOf(new Date()))
    const reconcile = await runCli(['reconcile', '--date', today, '--json', '--no-progress'], { env: envOf('tool', { SATANG_PROJECTOR: 'off' }) })
    mark('reconciled')
    opts.log(`topology: satang reconcile --date ${today}: exit ${String(reconcile.code)} in ${String((timings['reconciled'] ?? 0) - (timings['notifications delivered'] ?? 0))} ms`)

    // 7. the projector and the relay catch up with the whole log
    const caughtUpFrom = Date.now()
    for (;;) {
      const statuses = await projectionStatus(theStore, pool, READ_MODEL_SCHEMA, PROJECTIONS)
      const relay = await readRelayStatus({ store: theStore, pool }, READ_MODEL_SCHEMA, topic)
      if (statuses.every((s) => s.eventsBehind === 0) && relay.eventsBehind === 0) break
      if (Date.now() - caughtUpFrom > 120_000) throw new Error(`not caught up after 120 s: projections ${JSON.stringify(statuses.map((s) => [s.name, s.eventsBehind]))}, relay ${String(relay.eventsBehind)}`)
      await sleep(200)
    }
    mark('caught up')
    sampling = false
    await sampler

    const verify = await runCli(['project', '--verify', '--json'], { env: envOf('tool', {}) })
    mark('verified')
    const auditVerify = opts.store.kind === 'postgres' ? await runCli(['audit', 'verify', '--json'], { env: envOf('tool', {}) }) : null

    const log = await readWholeLog(theStore)
    const messages = await consumeTopic(opts.brokers, topic, 120_000)
    const delivery = checkDelivery(log, messages)
    mark('kafka read')

    const leadership = [...stack.processes.values()]
      .filter((p) => p.name.startsWith('relay-') || p.name.startsWith('scheduler-'))
      .flatMap((p) =>
        p.incarnations.flatMap((inc, n) => {
          const from = leaderSince(inc.proc.stderr())
          return from === null ? [] : [{ process: p.name, incarnation: n + 1, from, to: inc.killedAt ?? null }]
        }),
      )
    const schedulerLeaders = leadership.filter((l) => l.process.startsWith('scheduler-')).map((l) => `${l.process}#${String(l.incarnation)}`)
    const daily = await pool.query<{ n: string }>(`select count(*)::text as n from "${READ_MODEL_SCHEMA}".reconciliation_runs where trigger = 'scheduler' and scope_kind = 'days'`)
    const orders = await pool.query<{ n: string; paid: string }>(`select count(*)::text as n, count(*) filter (where status_code = 'PS')::text as paid from "${READ_MODEL_SCHEMA}".orders`)

    return {
      load,
      balancerServed: lb.served(),
      balancer502s: lb.failed(),
      log,
      delivery,
      notifications: { total: listed.notifications.length, acknowledged, unacknowledged: listed.notifications.length - acknowledged.length },
      kills,
      recoveries,
      relaySamples: { samples, bothLeading, leadersSeen: [...leadersSeen] },
      leadership,
      schedulerLeaders,
      dailyRuns: Number(daily.rows[0]?.n ?? -1),
      reconcile,
      verify,
      auditVerify,
      ordersRows: Number(orders.rows[0]?.n ?? 0),
      paidRows: Number(orders.rows[0]?.paid ?? 0),
      timings,
      cleanup,
    }
  } catch (e) {
    for (const p of stack.processes.values()) {
      const inc = p.incarnations.at(-1)
      if (inc !== undefined) opts.log(`--- ${p.name} stderr (last 1500 chars):\n${inc.proc.stderr().slice(-1500)}`)
    }
    await cleanup()
    throw e
  }
}
