// `npm run chaos [-- --short] [--duration S] [--json FILE] [--keep]`: the chaos suite (docs/development.md "Chaos suite").
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import type { Pool } from 'pg'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { bangkokDateOf, formatCalendarDate } from '../../src/domain/bangkok-time.ts'
import { silentLogger } from '../../src/logger.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA, projectionStatus } from '../../src/projections/index.ts'
import { readWholeLog } from '../e2e/relay-support.ts'
import { CALLBACK_KINDS, startCallbackChaos, type Notification } from './callbacks.ts'
import { duplicateEvents, findLeaks, forgedStateChanges, lostWrites, pemNeedles, rejectedReplays, type LoggedEvent, type Needle } from './checks.ts'
import { SERVER_FAULTS, injectFault, prepareDiskFull, type DiskFullSetup, type FaultRun, type ServerFault } from './faults.ts'
import { runTag, startLoad } from './load.ts'
import { reportJson, reportTable, type Check, type ChaosReport, type FaultRow, type RequestRow } from './report.ts'
import { MERCHANT_ID, startStack, type Stack } from './stack.ts'
import { logLinesOfRequests, newTraffic, request, sendUntilAnswered, type Traffic } from './traffic.ts'
import { until200 } from './supervisor.ts'

const USAGE = `usage: npm run chaos -- [--short] [--duration SECONDS] [--concurrency N] [--json FILE] [--keep] [--log-level LEVEL]

Runs satang (satang up, on a private embedded PostgreSQL in a temporary folder) and satang sandbox (the
gateway) as real child processes under a supervisor, puts sustained load on /v1 and /callbacks, and
injects faults one after the other: SIGKILL of satang (the supervisor starts it again), SIGKILL of the
PostgreSQL server (satang starts it again), gateway 5xx and gateway timeouts (the sandbox's /_sandbox
faults), a full disk under the event table (a tablespace on a small tmpfs; needs root, else skipped with
the reason), and all along duplicated, reordered and forged callbacks. Then it checks: no acknowledged
write lost, no duplicate event, read models equal a rebuild (satang project --verify), satang audit
verify passes, every process came back by itself, nothing forged was acknowledged or applied, the final
state equals the gateway's, and no token, key or payer datum it sent appears in any log line captured.
It prints a table (faults, requests, acknowledged, recovered, time to recover) and writes JSON.

  --short            the CI form: about 40 s of load, each fault once or twice (about 1.5 minutes in all)
  --duration S       seconds of load (default 180; with --short 40); faults cycle until it is over, each at least once
  --concurrency N    merchant clients creating payments (default 6; with --short 4)
  --json FILE        also write the figures as JSON to FILE (default: chaos.json in the run folder)
  --keep             keep the run folder (logs, data) even when the run passes (it is kept when it fails)
  --log-level LEVEL  satang's and the sandbox's log level (default info); every line is grepped for secrets
  -h, --help         this text

Exit codes: 0 every check passed, 1 a check failed (the table says which), 2 bad usage, 3 the run could
not be carried out (satang or the sandbox did not start, or the suite itself failed).`

type Options = { readonly short: boolean; readonly durationS: number; readonly concurrency: number; readonly json: string | undefined; readonly keep: boolean; readonly logLevel: string }

const usage = (message: string): never => {
  process.stderr.write(`chaos: ${message}\n(npm run chaos -- --help for usage)\n`)
  process.exit(2)
}

const options = (): Options => {
  const parsed = (() => {
    try {
      return parseArgs({
        options: {
          short: { type: 'boolean', default: false },
          duration: { type: 'string' },
          concurrency: { type: 'string' },
          json: { type: 'string' },
          keep: { type: 'boolean', default: false },
          'log-level': { type: 'string', default: 'info' },
          help: { type: 'boolean', short: 'h', default: false },
        },
        allowPositionals: false,
      }).values
    } catch (e) {
      return usage(e instanceof Error ? e.message : String(e))
    }
  })()
  if (parsed.help) {
    process.stdout.write(`${USAGE}\n`)
    process.exit(0)
  }
  const whole = (name: string, v: string | undefined, dflt: number, min: number, max: number): number => {
    if (v === undefined) return dflt
    const n = Number(v)
    if (!Number.isInteger(n) || n < min || n > max) return usage(`--${name} must be a whole number from ${String(min)} to ${String(max)}, got ${JSON.stringify(v)}`)
    return n
  }
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace']
  if (!levels.includes(parsed['log-level'])) usage(`--log-level must be one of ${levels.join(', ')}, got ${JSON.stringify(parsed['log-level'])}`)
  return {
    short: parsed.short,
    durationS: whole('duration', parsed.duration, parsed.short ? 40 : 180, 10, 86_400),
    concurrency: whole('concurrency', parsed.concurrency, parsed.short ? 4 : 6, 1, 64),
    json: parsed.json,
    keep: parsed.keep,
    logLevel: parsed['log-level'],
  }
}

const say = (line: string): void => void process.stderr.write(`chaos: ${line}\n`)

/** The server faults in the order they come round: each kind once per cycle, satang killed twice. */
const CYCLE: ReadonlyArray<ServerFault> = ['satang-sigkill', 'gateway-5xx', 'postgres-kill', 'gateway-timeout', 'disk-full', 'satang-sigkill']

type Settled = { readonly redelivered: number; readonly sandboxNotifications: ReadonlyArray<Notification & { readonly attempts: ReadonlyArray<{ readonly acknowledged: boolean }> }> }

/** After the load: the sandbox's notifications all delivered (those it gave up on, delivered by the suite as a later retry would). */
const settleNotifications = async (stack: Stack, traffic: Traffic): Promise<Settled> => {
  await request(traffic, 'sandbox control', `${stack.sandboxUrl}/_sandbox/faults`, { method: 'DELETE' })
  const waited = await request(traffic, 'sandbox control', `${stack.sandboxUrl}/_sandbox/notifications/wait`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ timeoutMs: 120_000 }), timeoutMs: 130_000 })
  if (waited.status !== 200) say(`the sandbox still had notifications pending after 120 s (${String(waited.status)})`)
  const listed = await request(traffic, 'sandbox control', `${stack.sandboxUrl}/_sandbox/notifications`, { method: 'GET' })
  const all = (listed.json as { notifications?: Settled['sandboxNotifications'] } | null)?.notifications ?? []
  let redelivered = 0
  for (const n of all.filter((x) => !x.attempts.some((a) => a.acknowledged))) {
    const a = await sendUntilAnswered(traffic, 'POST /callbacks/notifications (genuine, again)', `${stack.satangUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(n.fields) }, 60_000)
    if (a.status === 200 && a.text === 'SUCCESS') {
      traffic.notificationsAcked.push(n.fields)
      redelivered += 1
    } else traffic.unexpected.push(`a notification the sandbox gave up on, delivered again by the suite: ${String(a.status)} ${a.text.slice(0, 200)}`)
  }
  return { redelivered, sandboxNotifications: all }
}

const main = async (): Promise<number> => {
  const opts = options()
  const started = Date.now()
  const dir = mkdtempSync(join(tmpdir(), 'satang-chaos-'))
  const tag = runTag()
  say(`run folder ${dir} (logs in ${join(dir, 'logs')}); ${opts.short ? 'short form' : 'full run'}: ${String(opts.durationS)} s of load, ${String(opts.concurrency)} clients`)
  let stack: Stack | undefined
  let disk: DiskFullSetup = { ok: false, reason: 'not prepared' }
  let passed = false
  let cleaning: Promise<void> | undefined
  /** Stops what the run started and unmounts the tablespace's tmpfs: at the end, or on Ctrl-C. */
  const cleanup = (interrupted = false): Promise<void> =>
    (cleaning ??= (async () => {
      // the event table goes back to the data folder, so that a kept run folder holds the whole database
      // (not after Ctrl-C: the terminal stopped satang and its database with the suite)
      if (disk.ok && !interrupted) await stack?.superuser().query('alter table eventstore.events set tablespace pg_default').catch((e: unknown) => say(`moving the event table back failed: ${e instanceof Error ? e.message : String(e)}`))
      await stack?.stop().catch((e: unknown) => say(`stopping the run's processes failed: ${e instanceof Error ? e.message : String(e)}`))
      if (disk.ok) disk.cleanup()
      if (passed && !opts.keep) rmSync(dir, { recursive: true, force: true })
      else say(`run folder kept: ${dir}`)
    })())
  const interrupted = (signal: NodeJS.Signals): void => {
    say(`${signal}: stopping the run`)
    void cleanup(true).then(() => process.exit(130))
  }
  process.on('SIGINT', interrupted)
  process.on('SIGTERM', interrupted)
  try {
    try {
      stack = await startStack({ dir, logLevel: opts.logLevel, log: say })
    } catch (e) {
      say(`could not start the run: ${e instanceof Error ? e.message : String(e)}`)
      return 3
    }
    const s = stack
    say(`satang up at ${s.satangUrl} (embedded PostgreSQL on 127.0.0.1:${String(s.pgPort)}), sandbox at ${s.sandboxUrl}`)
    const db = await s.database()
    disk = await prepareDiskFull(s, s.superuser())
    say(disk.ok ? `event table moved to a tablespace on a 256 MiB tmpfs (${disk.dir}) for the disk-full fault` : `disk-full fault skipped: ${disk.reason}`)

    // 1. load, callback chaos, and the faults one after the other
    const traffic = newTraffic()
    const load = startLoad({ satangUrl: s.satangUrl, sandboxUrl: s.sandboxUrl, token: s.secrets.token, tag }, traffic, opts.concurrency)
    const callbacks = startCallbackChaos({ satangUrl: s.satangUrl, sandboxUrl: s.sandboxUrl, forgerPrivatePem: s.secrets.forgerPrivatePem, tag }, traffic, opts.short ? 150 : 250)
    const loadStarted = Date.now()
    const runs: FaultRun[] = []
    const skipped = new Map<ServerFault, string>()
    const faultDeps = { stack: s, traffic, create: (moid: string) => load.create(moid, 'probe', 5_000), tag, log: say, recoveryLimitMs: 120_000 }
    await sleep(3_000)
    for (let n = 0; ; n++) {
      const kind = CYCLE[n % CYCLE.length] ?? 'satang-sigkill'
      const outcome = await injectFault(kind, faultDeps, Math.floor(n / CYCLE.length), disk)
      if ('skipped' in outcome) skipped.set(kind, outcome.skipped)
      else {
        runs.push(outcome)
        say(`fault ${kind}: ${outcome.ttrMs === null ? 'NOT recovered' : `recovered in ${String(outcome.ttrMs)} ms`}`)
      }
      const cycleDone = n + 1 >= CYCLE.length
      if (cycleDone && Date.now() - loadStarted >= opts.durationS * 1000) break
      await sleep(opts.short ? 2_000 : 5_000)
    }
    const loadSeconds = Math.round((Date.now() - loadStarted) / 1000)
    say(`load and faults done after ${String(loadSeconds)} s; letting it settle`)
    await callbacks.stop()
    await load.stop()

    // 2. settle: notifications delivered, unknown outcomes resolved, projections caught up
    const settled = await settleNotifications(s, traffic)
    const store = makePostgresEventStore({ pool: db.pool, log: silentLogger() }, { schema: 'eventstore' })
    const openOutcomes = async (): Promise<number> =>
      Number((await db.pool.query<{ n: string }>(`select count(*)::text as n from "${READ_MODEL_SCHEMA}".orders where outcome_unknown or request_phase in ('requested', 'outcome_unknown')`)).rows[0]?.n ?? -1)
    const caughtUp = async (): Promise<boolean> => (await projectionStatus(store, db.pool, READ_MODEL_SCHEMA, PROJECTIONS)).every((p) => p.eventsBehind === 0 && p.state === 'running')
    const waitCaughtUp = async (): Promise<void> => {
      const from = Date.now()
      while (!(await caughtUp()) && Date.now() - from < 60_000) await sleep(300)
    }
    const settleFrom = Date.now()
    let open = await openOutcomes()
    while ((open > 0 || !(await caughtUp())) && Date.now() - settleFrom < 90_000) {
      await sleep(500)
      open = await openOutcomes()
    }

    // 3. the checks
    const checks: Check[] = []
    const check = (name: string, ok: boolean, detail: string): void => void checks.push({ name, ok, detail })
    const log: ReadonlyArray<LoggedEvent> = await readWholeLog(store)
    const sandboxAcked = settled.sandboxNotifications.filter((n) => n.attempts.some((a) => a.acknowledged)).map((n) => n.fields)
    const acked = {
      merchantId: MERCHANT_ID,
      creates: new Map([...traffic.orders.values()].flatMap((o) => (o.ack === undefined ? [] : [[o.moid, o.ack.status] as const]))),
      refundsTracked: traffic.refundsTracked,
      notifications: [...sandboxAcked, ...traffic.notificationsAcked],
    }
    const lost = lostWrites(log, acked)
    check('acknowledged writes lost', lost.length === 0, lost.length === 0 ? `0 of ${String(acked.creates.size + acked.refundsTracked.size + acked.notifications.length)}` : `${String(lost.length)}: ${lost.slice(0, 5).map((l) => `${l.what} ${l.id}: no ${l.missing}`).join('; ')}`)
    const dups = duplicateEvents(log)
    check('duplicate events', dups.length === 0, dups.length === 0 ? `0 among ${String(log.length)} events` : `${String(dups.length)}: ${dups.slice(0, 5).map((d) => `${d.stream} ${d.fact} ×${String(d.events)}`).join('; ')}`)

    const verify = await s.tool(['project', '--verify', '--json'])
    check('read models equal a rebuild (satang project --verify)', verify.code === 0, verify.code === 0 ? `${String(PROJECTIONS.length)} projections identical` : `exit ${String(verify.code)}: ${(verify.stdout + verify.stderr).slice(0, 600)}`)

    const verifyHelp = await s.tool(['audit', 'verify', '--help'])
    if (verifyHelp.code !== 0 || !/Usage: satang audit verify/.test(verifyHelp.stdout)) {
      check('satang audit verify', false, `this satang has no "audit verify" subcommand (satang audit verify --help exited ${String(verifyHelp.code)}): ${verifyHelp.stderr.slice(0, 200)}`)
    } else {
      const audit = await s.tool(['audit', 'verify', '--json', '--quiet'])
      const result = ((): Record<string, unknown> | null => {
        try {
          const j: unknown = JSON.parse(audit.stdout)
          return typeof j === 'object' && j !== null ? (j as Record<string, unknown>) : null
        } catch (e) {
          if (e instanceof SyntaxError) return null
          throw e
        }
      })()
      const intact = audit.code === 0 && result?.['intact'] === true
      check('satang audit verify', intact, intact ? `intact: ${String(result?.['events'])} events in ${String(result?.['streams'])} streams` : `exit ${String(audit.code)}: ${(audit.stdout + audit.stderr).slice(0, 600)}`)
    }

    // every process came back by itself and is up now
    const satangUp = await until200(`${s.satangUrl}/healthz`, 30_000)
    const sandboxUp = await until200(`${s.sandboxUrl}/_sandbox`, 30_000)
    const crashes = [...s.satang.unplannedExits(), ...s.sandbox.unplannedExits()]
    const satangLog = s.satang.output()
    const pgKills = runs.filter((r) => r.kind === 'postgres-kill').length
    const pgRestarts = (satangLog.match(/embedded PostgreSQL running again/g) ?? []).length
    const notRecovered = runs.filter((r) => r.recoveredAt === null)
    const cameBack = satangUp !== null && sandboxUp !== null && crashes.length === 0 && notRecovered.length === 0 && pgRestarts >= pgKills
    check(
      'every process came back by itself',
      cameBack,
      `satang: ${String(s.satang.incarnations.length)} incarnations after ${String(runs.filter((r) => r.kind === 'satang-sigkill').length)} SIGKILLs, /healthz ${satangUp === null ? 'DOWN' : '200'}; PostgreSQL started again by satang ${String(pgRestarts)} time(s) after ${String(pgKills)} kill(s); sandbox ${sandboxUp === null ? 'DOWN' : 'up'}; crashes (exits nobody caused): ${String(crashes.length)}${notRecovered.length > 0 ? `; not recovered: ${notRecovered.map((r) => r.kind).join(', ')}` : ''}`,
    )
    check('unknown create outcomes resolved', open === 0, `${String(open)} order(s) still awaiting their create's outcome`)

    // nothing forged was acknowledged or applied; the final state is the gateway's
    const forgedAcked = traffic.forgeries.filter((f) => f.acknowledged)
    const forgedApplied = forgedStateChanges(log)
    const replays = rejectedReplays(log)
    check(
      'forged callbacks refused, without effect, each distinct one kept once',
      forgedAcked.length === 0 && forgedApplied.length === 0 && replays.events === replays.distinctBodies,
      `${String(traffic.forgeries.length)} sent, ${String(forgedAcked.length)} acknowledged, ${String(forgedApplied.length)} state changes from unverified callbacks; rejected callbacks kept as ${String(replays.events)} events for ${String(replays.distinctBodies)} distinct bodies`,
    )
    // Callbacks that arrived out of order can leave an observation unapplied (a refund notified before
    // its payment is a discrepancy): reconciliation heals those, so the state is compared after a run.
    const beforeReconcile = await compareWithGateway(s, traffic, db.pool, tag)
    const days = [...new Set([started, Date.now()].map((ms) => formatCalendarDate(bangkokDateOf(new Date(ms)))))]
    // satang up's scheduler may be reconciling at this moment (one run per merchant at a time, by a
    // database lock): like an operator, wait for it to finish and run again.
    const reconcileArgs = ['reconcile', '--from', days[0] ?? '', '--to', days.at(-1) ?? '', '--json', '--no-progress']
    let reconcile = await s.tool(reconcileArgs)
    for (const until = Date.now() + 120_000; `${reconcile.stdout}${reconcile.stderr}`.includes('another reconciliation') && Date.now() < until; ) {
      say('another reconciliation is running (satang up\'s scheduler); trying again in 2 s')
      await new Promise((r) => setTimeout(r, 2_000))
      reconcile = await s.tool(reconcileArgs)
    }
    const verdict = /"verdict"\s*:\s*"([a-z_]+)"/.exec(reconcile.stdout)?.[1] ?? 'none'
    await waitCaughtUp()
    const finalState = await compareWithGateway(s, traffic, db.pool, tag)
    check(
      'final state equals the gateway',
      finalState.mismatches.length === 0,
      `${finalState.mismatches.length === 0 ? `${String(finalState.orders)} orders and ${String(finalState.refunds)} refunds as the gateway has them` : `${String(finalState.mismatches.length)} differ: ${finalState.mismatches.slice(0, 5).join('; ')}`} after satang reconcile ${days.join('..')} (exit ${String(reconcile.code)}, verdict ${verdict}); before it: ${beforeReconcile.mismatches.length === 0 ? 'none differed' : `${String(beforeReconcile.mismatches.length)} differed (${beforeReconcile.mismatches.slice(0, 3).join('; ')})`}`,
    )
    const logs = [
      ...[s.satang, s.sandbox].flatMap((p) => p.incarnations.flatMap((i) => [i.stdoutFile, i.stderrFile])).map((f) => ({ name: f.slice(dir.length + 1), text: readFileSync(f, 'utf8') })),
      ...s.toolOutputs.map((t, i) => ({ name: `satang ${t.args.join(' ')} (#${String(i + 1)})`, text: `${t.result.stdout}\n${t.result.stderr}` })),
    ]
    // An unexpected answer comes with satang's log lines of that request (its error and stack for a 500).
    const related = logLinesOfRequests(traffic.unexpected, logs)
    check(
      'no unexpected answers',
      traffic.unexpected.length === 0,
      traffic.unexpected.length === 0 ? 'none' : `${String(traffic.unexpected.length)}: ${traffic.unexpected.slice(0, 5).join('; ')}${related.length === 0 ? '' : `\n      satang's log of those requests:\n${related.slice(0, 10).map((l) => `        ${l}`).join('\n')}`}`,
    )

    // no token, key or payer datum in any log line
    const needles: Needle[] = [
      { what: 'the API token', value: s.secrets.token },
      ...pemNeedles('the merchant private key', s.secrets.merchantPrivatePem),
      ...pemNeedles('the gateway private key', s.secrets.gatewayPrivatePem),
      ...pemNeedles('the forger private key', s.secrets.forgerPrivatePem),
      ...traffic.pii,
    ]
    const lines = logs.reduce((n, l) => n + l.text.split('\n').length, 0)
    const leaks = findLeaks(logs, needles)
    check('no token, key or payer data in the logs', leaks.length === 0, leaks.length === 0 ? `${String(needles.length)} secrets and payer data sought in ${String(lines)} log lines of ${String(logs.length)} captures: none found` : `${String(leaks.length)} found: ${leaks.slice(0, 8).map((l) => `${l.what} in ${l.where} line ${String(l.line)}`).join('; ')}`)

    // 4. the report
    const faultRows: FaultRow[] = [
      ...SERVER_FAULTS.map((kind): FaultRow => {
        const mine = runs.filter((r) => r.kind === kind)
        const skip = skipped.get(kind)
        return {
          kind,
          injected: mine.length,
          recovered: mine.filter((r) => r.recoveredAt !== null).length,
          ttrMs: mine.flatMap((r) => (r.ttrMs === null ? [] : [r.ttrMs])),
          ...(skip === undefined || mine.length > 0 ? {} : { skipped: skip }),
          details: mine.map((r) => `${r.detail}: ${r.ttrMs === null ? 'not recovered' : `recovered in ${String(r.ttrMs)} ms`}`),
        }
      }),
      ...CALLBACK_KINDS.map((kind): FaultRow => {
        const c = callbacks.counts().get(kind) ?? { injected: 0, handled: null }
        return { kind, injected: c.injected, recovered: c.handled, ttrMs: [], details: [] }
      }),
    ]
    if (settled.redelivered > 0) faultRows.push({ kind: 'notifications given up', injected: settled.redelivered, recovered: settled.redelivered, ttrMs: [], details: ['the sandbox gave up on them (6 attempts in about 30 s); the suite delivered them again, as a later retry would'] })
    const requests: RequestRow[] = [...traffic.routes.entries()].map(([route, t]) => ({ route, sent: t.sent, acknowledged: t.acknowledged, statuses: t.statuses }))
    const violations = checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`)
    const report: ChaosReport = {
      run: { form: opts.short ? 'short' : 'full', loadSeconds, totalSeconds: Math.round((Date.now() - started) / 1000), tag, dir, startedAt: new Date(started).toISOString() },
      faults: faultRows,
      requests,
      acknowledged: { creates: acked.creates.size, refunds: acked.refundsTracked.size, notifications: acked.notifications.length },
      lost: lost.length,
      duplicated: dups.length,
      checks,
      violations,
      ok: violations.length === 0,
    }
    process.stdout.write(`\n${reportTable(report)}\n`)
    const jsonFile = opts.json ?? join(dir, 'chaos.json')
    writeFileSync(jsonFile, `${JSON.stringify(reportJson(report), null, 2)}\n`)
    say(`figures as JSON in ${jsonFile}`)
    passed = report.ok
    return passed ? 0 : 1
  } finally {
    process.off('SIGINT', interrupted)
    process.off('SIGTERM', interrupted)
    await cleanup()
  }
}

/** The final state of every order and refund of this run, in satang's read models and at the gateway. */
const compareWithGateway = async (s: Stack, traffic: Traffic, pool: Pool, tag: string): Promise<{ readonly orders: number; readonly refunds: number; readonly mismatches: ReadonlyArray<string> }> => {
  const mismatches: string[] = []
  const prefix = `CH-${tag}-`
  const gwOrders = ((await request(traffic, 'sandbox control', `${s.sandboxUrl}/_sandbox/orders?merchant_id=${MERCHANT_ID}`, { method: 'GET' })).json as { orders?: ReadonlyArray<{ merchantOrderId: string; status: string; refunds?: unknown }> } | null)?.orders ?? []
  const ours = new Map((await pool.query<{ merchant_order_id: string; status_code: string | null }>(`select merchant_order_id, status_code from "${READ_MODEL_SCHEMA}".orders where merchant_id = $1`, [MERCHANT_ID])).rows.map((r) => [r.merchant_order_id, r.status_code ?? 'no status']))
  let orders = 0
  for (const o of gwOrders.filter((x) => x.merchantOrderId.startsWith(prefix))) {
    orders += 1
    const mine = ours.get(o.merchantOrderId)
    if (mine !== o.status) mismatches.push(`order ${o.merchantOrderId}: gateway ${o.status}, satang ${String(mine ?? 'no row')}`)
  }
  const gwRefunds = ((await request(traffic, 'sandbox control', `${s.sandboxUrl}/_sandbox/refunds`, { method: 'GET' })).json as { refunds?: ReadonlyArray<Record<string, unknown>> } | null)?.refunds ?? []
  const ourRefunds = new Map(
    (await pool.query<{ merchant_refund_id: string; status_code: string | null; amount_satang: string | null; open_discrepancies: number }>(`select merchant_refund_id, status_code, amount_satang::text, open_discrepancies from "${READ_MODEL_SCHEMA}".refunds where merchant_id = $1`, [MERCHANT_ID])).rows.map((r) => [r.merchant_refund_id, r]),
  )
  let refunds = 0
  for (const r of gwRefunds) {
    const mrid = String(r['merchantRefundId'] ?? r['merchant_refund_id'] ?? '')
    if (!mrid.startsWith(`CHR-${tag}-`)) continue
    refunds += 1
    const status = String(r['status'] ?? r['refund_status'] ?? '')
    const mine = ourRefunds.get(mrid)
    if (mine?.status_code !== status) mismatches.push(`refund ${mrid}: gateway ${status}, satang ${mine === undefined ? 'no row' : `${mine.status_code ?? 'no status'}, ${String(mine.open_discrepancies)} open discrepancies`}`)
    else if (status === 'RS' && mine.amount_satang !== '1000') mismatches.push(`refund ${mrid}: recorded amount ${String(mine.amount_satang)} satang, the gateway refunded 1000`)
  }
  return { orders, refunds, mismatches }
}

process.exitCode = await main().catch((e: unknown) => {
  say(`the run broke off: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
  return 3
})
