import type { Pool } from 'pg'

/**
 * Console sessions that were signed out, in `<schema>.console_sessions_ended` (beside the read
 * models): one row per session id until the session would have expired anyway. Every api process of
 * an installation reads the same rows, so a cookie signed out at one is refused by all. A read is one
 * primary-key lookup; rows past their expiry are removed at each sign-out.
 */
export const CONSOLE_SESSIONS_ENDED_TABLE = 'console_sessions_ended'

const table = (schema: string): string => `"${schema}"."${CONSOLE_SESSIONS_ENDED_TABLE}"`

export const createConsoleSessionsEndedTable = (schema: string): string => `
create table if not exists ${table(schema)} (
  session_id  text collate "C" primary key,
  expires_at  timestamptz not null,
  ended_at    timestamptz not null default now()
);
create index if not exists ${CONSOLE_SESSIONS_ENDED_TABLE}_expires_idx on ${table(schema)} (expires_at)`

/** Where ended sessions are kept: what the console asks on every request that carries a session. */
export type EndedSessions = {
  readonly hasEnded: (sessionId: string) => Promise<boolean>
  readonly end: (sessionId: string, expiresAt: Date) => Promise<void>
}

export const makePostgresEndedSessions = (db: { readonly pool: Pool; readonly schema: string }): EndedSessions => ({
  hasEnded: async (sessionId) => {
    const r = await db.pool.query({ name: 'console-session-ended', text: `select 1 from ${table(db.schema)} where session_id = $1`, values: [sessionId] })
    return (r.rowCount ?? 0) > 0
  },
  end: async (sessionId, expiresAt) => {
    await db.pool.query({ text: `insert into ${table(db.schema)} (session_id, expires_at) values ($1, $2) on conflict (session_id) do nothing`, values: [sessionId, expiresAt] })
    await db.pool.query({ text: `delete from ${table(db.schema)} where expires_at < now() - interval '1 hour'` })
  },
})
