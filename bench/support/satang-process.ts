// satang as the bench starts it: `satang up` (every role) or one role per process, from the CLI, on a
// database of the bench's, with a clean environment (satang refuses SATANG_* variables it does not know).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type pg from 'pg'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { Logger } from '../../src/logger.ts'
import { PROJECTIONS } from '../../src/projections/index.ts'
import { EVENT_SCHEMA } from './databases.ts'
import { SATANG_BIN, startNode, type Running } from './processes.ts'

/** process.env without any SATANG_* variable, plus `settings`. */
export const satangEnv = (settings: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SATANG_')) env[k] = v
  return { ...env, ...settings }
}

export type SatangProcess = { readonly running: Running; readonly url: string }

/** `satang up [--role ROLE]` on its own data directory and an ephemeral port; resolves once it is up. */
export const startSatang = async (role: 'all' | 'api' | 'projector' | 'scheduler' | 'relay', settings: Readonly<Record<string, string>>): Promise<SatangProcess> => {
  const dir = mkdtempSync(join(tmpdir(), `satang-bench-${role}-`))
  const running = startNode([SATANG_BIN, 'up', '--allow-superuser', ...(role === 'all' ? [] : ['--role', role])], satangEnv({ SATANG_HTTP_PORT: '0', SATANG_DATA_DIR: dir, SATANG_LOG_LEVEL: 'warn', ...settings }))
  const m = await running.waitFor(/HTTP service at (http:\/\/[^\s]+)/, 180_000)
  await running.waitFor(/satang: up\b/, 180_000)
  return { running, url: m[1] ?? '' }
}

/** Resolves once every projection's checkpoint has reached the head of the log; throws on a failed projection. */
export const waitForProjections = async (pool: pg.Pool, log: Logger, timeoutMs: number, progress?: (line: string) => void): Promise<void> => {
  const store = makePostgresEventStore({ pool, log }, { schema: EVENT_SCHEMA })
  const head = await store.headPosition()()
  await store.close()
  const position = E.isRight(head) ? head.right : undefined
  if (position === undefined) return
  const started = Date.now()
  let lastReport = Date.now()
  for (;;) {
    const { rows } = await pool.query<{ name: string; position: string | null; failure: string | null; applied: string }>('select name, position, failure, events_applied::text as applied from satang.projection_checkpoints')
    const failed = rows.filter((r) => r.failure !== null)
    if (failed.length > 0) throw new Error(`projections failed: ${failed.map((r) => `${r.name}: ${r.failure ?? ''}`).join('; ')}`)
    if (rows.length === PROJECTIONS.length && rows.every((r) => r.position !== null && r.position >= position)) return
    if (progress !== undefined && Date.now() - lastReport > 10_000) {
      lastReport = Date.now()
      progress(`  ${rows.map((r) => `${r.name} ${Number(r.applied).toLocaleString('en-US')}`).join(', ')} applied`)
    }
    if (Date.now() - started > timeoutMs) throw new Error(`the projections did not reach the head of the log within ${String(timeoutMs / 1000)} s`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
