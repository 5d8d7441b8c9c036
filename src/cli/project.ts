import type { Command } from 'commander'
import { PROJECTIONS, READ_MODEL_SCHEMA, projectionNamed, projectionStatus, rebuildProjection, type ProjectionStatus } from '../projections/index.ts'
import { compareWithRebuild } from '../projections/rebuild.ts'
import { makeEventStore, withEventTable } from '../composition/database.ts'
import { rootLogger } from '../composition/startup.ts'
import { runProjector } from '../roles/projector.ts'
import { configOrUsage, openMigratedDatabase, quietLogger } from './tool-config.ts'
import { EXIT, UsageError, untilStopSignal } from './io.ts'

type ProjectOptions = { status?: boolean; rebuild?: string | boolean; verify?: string | boolean; json?: boolean }

const seconds = (s: number): string => (s < 1 ? `${(s * 1000).toFixed(0)} ms` : s < 120 ? `${s.toFixed(1)} s` : `${(s / 60).toFixed(1)} min`)

const statusLine = (s: ProjectionStatus): string => {
  const behind = s.eventsBehind === 0 ? 'caught up' : `${s.eventsBehindCapped ? '≥' : ''}${s.eventsBehind.toLocaleString('en-US')} events / ${seconds(s.secondsBehind)} behind`
  const state = s.state === 'failed' ? 'FAILED' : s.state === 'not_migrated' ? 'not migrated (run satang migrate)' : 'running'
  const line = `${s.name.padEnd(14)} ${state.padEnd(9)} ${behind.padEnd(34)} ${s.eventsApplied.toLocaleString('en-US').padStart(14)}  ${s.position ?? 'start'}`
  return s.failure === null ? line : `${line}\n  stopped ${s.failure.at.toISOString()}: ${s.failure.message}`
}

const statusJson = (s: ProjectionStatus) => ({
  name: s.name,
  description: s.description,
  state: s.state,
  position: s.position,
  events_applied: s.eventsApplied,
  events_behind: s.eventsBehind,
  events_behind_capped: s.eventsBehindCapped,
  seconds_behind: s.secondsBehind,
  last_recorded_at: s.lastRecordedAt?.toISOString() ?? null,
  updated_at: s.updatedAt?.toISOString() ?? null,
  failure: s.failure === null ? null : { at: s.failure.at.toISOString(), message: s.failure.message, stream: s.failure.stream, position: s.failure.position },
})

/** `satang project`: run the projector, show its lag (`--status`), or rebuild read models (`--rebuild [NAME]`). */
export const registerProjectCommand = (program: Command, setExitCode: (code: number) => void): void => {
  program
    .command('project')
    .description('run the projector that keeps the read models (orders, refunds, subscriptions, ledger, audit log) current; or show its lag; or rebuild read models from the event log')
    .option('--status', 'print each projection: running or failed (and why), events and seconds behind the log, events applied, checkpoint')
    .option('--rebuild [name]', `rebuild one projection (${PROJECTIONS.map((p) => p.name).join(', ')}) or, without a name, all of them, from the start of the log into fresh tables swapped in atomically`)
    .option('--verify [name]', 'rebuild one projection (or all) from the log into scratch tables and compare them row for row with the live ones, which are left unchanged; the live projection must have caught up')
    .option('--json', 'with --status, --rebuild or --verify: print the result as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Without options: runs the projector in the foreground until Ctrl-C (SIGINT) or SIGTERM; run it this way',
        'when satang up runs with SATANG_PROJECTOR=off. Migrations are applied first.',
        '',
        'A rebuild leaves the live tables serving (and the running projector updating them) until the swap;',
        'readers see the old tables or the new ones, never a half-built one.',
        '',
        'Exit codes: 0 ok; 1 --status found a failed projection, or --verify found differences; 2 bad usage; 3 the database or event log failed.',
      ].join('\n'),
    )
    .action(async (opts: ProjectOptions) => {
      const modes = [opts.status === true ? '--status' : null, opts.rebuild !== undefined ? '--rebuild' : null, opts.verify !== undefined ? '--verify' : null].filter((m) => m !== null)
      if (modes.length > 1) throw new UsageError(`${modes.join(' and ')} cannot be combined`)
      const rebuildName = typeof opts.rebuild === 'string' ? opts.rebuild : undefined
      const verifyName = typeof opts.verify === 'string' ? opts.verify : undefined
      for (const [option, name] of [['--rebuild', rebuildName], ['--verify', verifyName]] as const) {
        if (name !== undefined && projectionNamed(name) === undefined) throw new UsageError(`${option}: no projection named ${JSON.stringify(name)}; the projections are ${PROJECTIONS.map((p) => p.name).join(', ')}`)
      }
      if (opts.json === true && modes.length === 0) throw new UsageError('--json goes with --status, --rebuild or --verify')
      const config = await configOrUsage()
      // Running the projector logs as satang up does; the other modes print an answer.
      const log = modes.length > 0 ? quietLogger(config) : rootLogger(config)
      const db = await openMigratedDatabase(config, log, setExitCode)
      if (db === undefined) return
      const store = makeEventStore(config, db, log)
      try {
        if (opts.status === true) {
          const statuses = await projectionStatus(store, db.pool, READ_MODEL_SCHEMA, PROJECTIONS)
          if (opts.json === true) process.stdout.write(`${JSON.stringify(statuses.map(statusJson), null, 2)}\n`)
          else process.stdout.write(`${['PROJECTION     STATE     LAG                                EVENTS APPLIED  CHECKPOINT', ...statuses.map(statusLine)].join('\n')}\n`)
          setExitCode(statuses.some((s) => s.state === 'failed') ? EXIT.negative : EXIT.ok)
          return
        }
        if (opts.rebuild !== undefined) {
          const targets = rebuildName === undefined ? PROJECTIONS : PROJECTIONS.filter((p) => p.name === rebuildName)
          const results = []
          for (const projection of targets) {
            let lastReport = 0
            const result = await rebuildProjection(
              { store, pool: db.pool, log },
              {
                schema: READ_MODEL_SCHEMA,
                projection,
                ...withEventTable(config),
                onProgress: (p) => {
                  const now = Date.now()
                  if (p.phase === 'building' && now - lastReport < 1000) return
                  lastReport = now
                  process.stderr.write(`satang: rebuilding ${p.projection}: ${p.phase}, ${p.events.toLocaleString('en-US')} events applied\n`)
                },
              },
            )
            results.push(result)
            if (opts.json !== true) process.stdout.write(`satang: ${result.projection} rebuilt from ${result.events.toLocaleString('en-US')} events in ${seconds(result.seconds)} and swapped in (checkpoint ${result.position ?? 'start'})\n`)
          }
          if (opts.json === true) process.stdout.write(`${JSON.stringify(results.map((r) => ({ projection: r.projection, events: r.events, position: r.position, seconds: r.seconds })), null, 2)}\n`)
          setExitCode(EXIT.ok)
          return
        }
        if (opts.verify !== undefined) {
          const targets = verifyName === undefined ? PROJECTIONS : PROJECTIONS.filter((p) => p.name === verifyName)
          const report = []
          for (const projection of targets) {
            const { result, differences } = await compareWithRebuild({ store, pool: db.pool, log }, { schema: READ_MODEL_SCHEMA, projection, ...withEventTable(config) })
            const identical = differences.every((d) => d.onlyLive === 0 && d.onlyRebuilt === 0)
            report.push({ projection: projection.name, events: result.events, position: result.position, identical, tables: differences.map((d) => ({ table: d.table, only_live: d.onlyLive, only_rebuilt: d.onlyRebuilt })) })
            if (opts.json !== true) {
              const detail = differences.map((d) => (d.onlyLive === 0 && d.onlyRebuilt === 0 ? `${d.table} identical` : `${d.table}: ${String(d.onlyLive)} rows only live, ${String(d.onlyRebuilt)} only rebuilt`)).join('; ')
              process.stdout.write(`satang: ${projection.name} ${identical ? 'matches' : 'DIFFERS FROM'} a rebuild from ${result.events.toLocaleString('en-US')} events (${detail})\n`)
            }
          }
          if (opts.json === true) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
          setExitCode(report.every((r) => r.identical) ? EXIT.ok : EXIT.negative)
          return
        }
        const projector = runProjector(config, store, db, log)
        process.stdout.write(`satang: projector running (${PROJECTIONS.map((p) => p.name).join(', ')}) on ${db.description}; Ctrl-C stops\n`)
        await untilStopSignal('the projector')
        await projector.stop()
        process.stdout.write('satang: projector stopped.\n')
        setExitCode(EXIT.ok)
      } catch (e) {
        process.stderr.write(`satang: ${e instanceof Error ? e.message : String(e)}\n`)
        setExitCode(EXIT.failure)
      } finally {
        await store.close()
        await db.close()
      }
    })
}
