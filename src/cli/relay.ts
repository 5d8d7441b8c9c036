import type { Command } from 'commander'
import { readRelayStatus, readRelayStatuses, type RelayStatus } from '../jobs/index.ts'
import { READ_MODEL_SCHEMA, makeEventStore } from '../composition/database.ts'
import { rootLogger } from '../composition/startup.ts'
import { runRelay } from '../roles/relay.ts'
import { EXIT, UsageError, untilStopSignal } from './io.ts'
import { configOrUsage, openMigratedDatabase, quietLogger } from './tool-config.ts'

type RelayOptions = { status?: boolean; json?: boolean }

const PROGRESS_EVERY_MS = 10_000

const seconds = (s: number): string => (s < 1 ? `${(s * 1000).toFixed(0)} ms` : s < 120 ? `${s.toFixed(1)} s` : `${(s / 60).toFixed(1)} min`)
const count = (n: number): string => n.toLocaleString('en-US')

const STATE_TEXT: Readonly<Record<RelayStatus['state'], string>> = {
  publishing: 'publishing',
  failing: 'FAILING (retrying)',
  stalled: 'STALLED (a relay holds the lock but wrote no heartbeat for 30 s)',
  not_running: 'not running (no relay holds the lock)',
  never_ran: 'never ran for this topic',
}

const statusText = (s: RelayStatus): string => {
  const lag = s.eventsBehind === 0 ? 'caught up' : `${s.eventsBehindCapped ? '≥' : ''}${count(s.eventsBehind)} events / ${seconds(s.secondsBehind)} behind`
  return [
    `topic           ${s.topic}`,
    `state           ${STATE_TEXT[s.state]}`,
    `publisher       ${s.holder === null ? '—' : `${s.holder.application} (backend pid ${String(s.holder.backendPid)}${s.holder.since === null ? '' : `, since ${s.holder.since.toISOString()}`})`}; ${String(s.standbys)} standing by`,
    `lag             ${lag}`,
    `publish rate    ${count(Math.round(s.publishRate))} events/s (last 10 s)`,
    `published       ${count(s.eventsPublished)} events${s.publishedAt === null ? '' : `, last at ${s.publishedAt.toISOString()}`}`,
    `checkpoint      ${s.position ?? 'start of the log'}`,
    `heartbeat       ${s.heartbeatAt === null ? '—' : s.heartbeatAt.toISOString()}`,
    `last error      ${s.lastError === null ? 'none' : `${s.lastError.at.toISOString()} [${s.lastError.kind}] ${s.lastError.message}`}`,
  ].join('\n')
}

const statusJson = (s: RelayStatus) => ({
  topic: s.topic,
  state: s.state,
  holder: s.holder === null ? null : { application: s.holder.application, backend_pid: s.holder.backendPid, since: s.holder.since?.toISOString() ?? null },
  standbys: s.standbys,
  position: s.position,
  events_behind: s.eventsBehind,
  events_behind_capped: s.eventsBehindCapped,
  seconds_behind: s.secondsBehind,
  events_published: s.eventsPublished,
  publish_rate: s.publishRate,
  published_at: s.publishedAt?.toISOString() ?? null,
  last_error: s.lastError === null ? null : { at: s.lastError.at.toISOString(), kind: s.lastError.kind, message: s.lastError.message },
  heartbeat_at: s.heartbeatAt?.toISOString() ?? null,
})

/** `satang relay`: publish every event of the log to Kafka (`--status`: how it is doing). */
export const registerRelayCommand = (program: Command, setExitCode: (code: number) => void): void => {
  program
    .command('relay')
    .description('publish every event of the log to the Kafka topic (SATANG_KAFKA_TOPIC on SATANG_KAFKA_BROKERS), in order per stream, at least once; or show how the relay is doing')
    .option('--status', 'print the relay of SATANG_KAFKA_TOPIC: who publishes, lag in events and seconds, publish rate, last error')
    .option('--json', 'with --status: print it as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Without options: runs the relay in the foreground until Ctrl-C (SIGINT) or SIGTERM, printing progress every',
        '10 s. Only one relay per database publishes (a PostgreSQL advisory lock); others stand by and take over',
        'within seconds when it dies. satang up runs the same relay when SATANG_KAFKA_BROKERS is set.',
        'Migrations are applied first. A broker that is down or a topic that cannot be created stops publishing',
        'with a clear error; the relay retries with backoff (SATANG_KAFKA_RETRY_BASE_MS … SATANG_KAFKA_RETRY_MAX_MS).',
        '',
        'The message contract (key, CloudEvents headers, JSON value) is in docs/kafka.md; JSON Schemas in schemas/.',
        '',
        '--status reads the relay\'s own rows in the database (checkpoint, heartbeat, lock), not this process\'s Kafka settings.',
        'Exit codes: 0 ok; 1 --status: the relay is failing, stalled or not running; 2 bad usage or configuration;',
        '3 the database or event log failed.',
      ].join('\n'),
    )
    .action(async (opts: RelayOptions) => {
      if (opts.json === true && opts.status !== true) throw new UsageError('--json goes with --status')
      const config = await configOrUsage()
      if (opts.status !== true && config.SATANG_KAFKA_BROKERS === undefined) {
        throw new UsageError('SATANG_KAFKA_BROKERS is not set: give the Kafka bootstrap brokers as host:port[,host:port…] (see docs/kafka.md "For operators: the relay")')
      }
      const log = opts.status === true ? quietLogger(config) : rootLogger(config)
      const db = await openMigratedDatabase(config, log, setExitCode)
      if (db === undefined) return
      const store = makeEventStore(config, db, log)
      try {
        if (opts.status === true) {
          // The relay's own rows: the configured topic, or, when no relay ever published to it from this
          // database, the topics relays did publish to (this process's configuration may not be theirs).
          const configured = await readRelayStatus({ store, pool: db.pool }, READ_MODEL_SCHEMA, config.SATANG_KAFKA_TOPIC)
          const others = configured.state === 'never_ran' ? (await readRelayStatuses({ store, pool: db.pool }, READ_MODEL_SCHEMA, config.SATANG_KAFKA_TOPIC)).filter((s) => s.state !== 'never_ran') : []
          const shown = others.length > 0 ? others : [configured]
          if (others.length > 0) process.stderr.write(`satang: no relay ever published to SATANG_KAFKA_TOPIC=${config.SATANG_KAFKA_TOPIC} from this database; the relays that did:\n`)
          const [only] = shown
          process.stdout.write(opts.json === true ? `${JSON.stringify(shown.length === 1 && only !== undefined ? statusJson(only) : shown.map(statusJson), null, 2)}\n` : `${shown.map(statusText).join('\n\n')}\n`)
          setExitCode(shown.every((s) => s.state === 'publishing') ? EXIT.ok : EXIT.negative)
          return
        }
        const relay = runRelay(config, store, db, log)
        if (relay === undefined) throw new UsageError('SATANG_KAFKA_BROKERS is not set')
        process.stdout.write(`satang: relay for topic ${config.SATANG_KAFKA_TOPIC} on ${(config.SATANG_KAFKA_BROKERS ?? []).join(',')} from ${db.description}; Ctrl-C stops\n`)
        let lastRole = relay.runtime().role
        let lastError = relay.runtime().lastError
        let lastPublished = 0
        let lastReport = Date.now()
        const progress = setInterval(() => {
          const r = relay.runtime()
          if (r.role !== lastRole) {
            process.stdout.write(`satang: relay ${r.role === 'leader' ? 'publishing (this process holds the relay lock)' : r.role === 'standby' ? 'standing by (another process publishes)' : r.role}\n`)
            lastRole = r.role
          }
          if (r.lastError !== lastError && r.lastError !== null) {
            process.stdout.write(`satang: relay error [${r.lastError.kind}]: ${r.lastError.message}; retrying with backoff\n`)
          }
          lastError = r.lastError
          const now = Date.now()
          if (now - lastReport < PROGRESS_EVERY_MS) return
          const sent = r.published - lastPublished
          if (r.role === 'leader' && (sent > 0 || r.failing)) {
            const error = r.failing && r.lastError !== null ? `; failing: ${r.lastError.message}` : ''
            process.stdout.write(`satang: relay published ${count(sent)} events in ${seconds((now - lastReport) / 1000)} (${count(Math.round(r.publishRate))}/s), ${count(r.published)} since start, checkpoint ${r.position ?? 'start'}${error}\n`)
          }
          lastPublished = r.published
          lastReport = now
        }, 250)
        await untilStopSignal('the relay')
        clearInterval(progress)
        await relay.stop()
        process.stdout.write(`satang: relay stopped (${count(relay.runtime().published)} events published by this process).\n`)
        setExitCode(EXIT.ok)
      } catch (e) {
        if (e instanceof UsageError) throw e
        process.stderr.write(`satang: ${e instanceof Error ? e.message : String(e)}\n`)
        setExitCode(EXIT.failure)
      } finally {
        await store.close()
        await db.close()
      }
    })
}
