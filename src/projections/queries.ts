import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import * as t from 'io-ts'
import type { EventMetadata, JsonObject, Position, RecordedEvent } from '../application/ports/event-store.ts'
import type { OpenCreates, Projected, QuarantineClaim, QuarantinedKept, ReadModelFailure, ReadModelQueries } from '../application/ports/read-models.ts'
import type { Refund } from '../domain/refund/index.ts'
import type { Subscription } from '../domain/subscription/index.ts'
import { isRetriablePgError, sqlStateOf } from '../platform/postgres/errors.ts'
import { inReadOnlySnapshot } from '../platform/postgres/snapshot.ts'
import { AUDIT_LOG, AUDIT_LOG_PROJECTION_NAME } from './audit-log/projection.ts'
import { readCheckpoints } from './checkpoints.ts'
import { paymentViewOfRow } from './orders/projection.ts'
import { decodeRefundView } from './refunds/state.ts'
import { decodeSubscriptionView } from './subscriptions/state.ts'
import { qualified, type ReadModels } from './types.ts'

const failure =
  (operation: string) =>
  (cause: unknown): ReadModelFailure => ({ _tag: 'ReadModelFailure', operation, retriable: isRetriablePgError(cause), missing: sqlStateOf(cause) === '42P01', cause })

/** Runs `read`; a thrown error (the pool's, or a row that does not decode) becomes a ReadModelFailure. */
const attempt =
  <A>(operation: string, read: () => Promise<A>): TE.TaskEither<ReadModelFailure, A> =>
  () =>
    read().then(E.right, (cause: unknown) => E.left(failure(operation)(cause)))

type StateRow = { projection_state: unknown; last_event_position: string }

// A row of `audit_log` as the trail reads it: the stored envelope, recorded_at as epoch milliseconds
// (the store's precision, so the trail is the same whichever source served it).
const AuditLogRow = t.type({
  stream_revision: t.string,
  global_position: t.string,
  event_id: t.string,
  type: t.string,
  schema_version: t.number,
  recorded_at_ms: t.string,
  payload: t.UnknownRecord,
  metadata: t.UnknownRecord,
})
const AuditLogRows = t.array(AuditLogRow)
const QuarantinedRows = t.array(t.intersection([AuditLogRow, t.type({ stream_name: t.string })]))

/** The audit_log column that holds each kind of claimed id (indexed with the log order). */
const CLAIM_COLUMNS: Readonly<Record<QuarantineClaim['kind'], string>> = { order: 'merchant_order_id', refund: 'merchant_refund_id', subscription: 'merchant_subscribe_id' }

const isEventMetadata = (m: Readonly<Record<string, unknown>>): m is EventMetadata =>
  typeof m['correlationId'] === 'string' && typeof m['causationId'] === 'string' && typeof m['recordedAt'] === 'string' && typeof m['source'] === 'string'

const recordedOfRow = (stream: string, row: t.TypeOf<typeof AuditLogRow>): RecordedEvent => {
  const m = row.metadata
  if (!isEventMetadata(m)) throw new Error(`audit_log: event ${row.event_id} has no valid metadata`)
  return {
    eventId: row.event_id,
    type: row.type,
    schemaVersion: row.schema_version,
    // jsonb read back by pg is JSON by construction
    data: row.payload as JsonObject,
    metadata: m,
    streamName: stream,
    streamRevision: BigInt(row.stream_revision),
    position: row.global_position as Position,
    recordedAt: new Date(Number(row.recorded_at_ms)),
  }
}

/** The read models' answers to the use cases (the application's `ReadModelQueries` port), over the tables the projections own. */
export const makeReadModelQueries = (rm: ReadModels): ReadModelQueries => {
  const stateOf = async <A>(table: 'orders' | 'refunds' | 'subscriptions', stream: string, decode: (json: unknown) => A | null): Promise<Projected<A> | undefined> => {
    const { rows } = await rm.pool.query<StateRow>(`select projection_state, last_event_position from ${qualified(rm.schema, table)} where stream_name = $1`, [stream])
    const row = rows[0]
    if (row === undefined) return undefined
    const value = decode(row.projection_state)
    return value === null ? undefined : { value, position: row.last_event_position }
  }

  // One snapshot for both: the rows are exactly the events up to the checkpoint.
  const openCreates = (): Promise<OpenCreates> =>
    inReadOnlySnapshot(rm.pool, async (client) => {
      const cp = (await readCheckpoints(client, rm.schema, ['orders'])).get('orders')
      if (cp === undefined) throw new Error('the orders projection has no checkpoint row')
      if (cp.failure !== null) throw new Error(`the orders projection is stopped: ${cp.failure.message}`)
      const rows = await client.query<{ stream_name: string }>(`select stream_name from ${qualified(rm.schema, 'orders')} where outcome_unknown`)
      return { streams: new Set(rows.rows.map((r) => r.stream_name)), checkpoint: cp.position ?? undefined }
    })

  const auditEvents = async (stream: string): Promise<ReadonlyArray<RecordedEvent>> => {
    const r = await rm.pool.query(
      `select stream_revision::text, global_position, event_id::text, type, schema_version,
              (extract(epoch from recorded_at) * 1000)::bigint::text as recorded_at_ms, payload, metadata
         from ${qualified(rm.schema, AUDIT_LOG)} a where a.stream_name = $1 order by a.stream_revision`,
      [stream],
    )
    const decoded = AuditLogRows.decode(r.rows)
    if (E.isLeft(decoded)) throw new Error(`audit_log: unexpected rows for ${stream}`)
    return decoded.right.map((row) => recordedOfRow(stream, row))
  }

  // One snapshot: the rows are exactly the audit log's up to its checkpoint.
  const quarantinedNaming = (claim: QuarantineClaim): Promise<QuarantinedKept> =>
    inReadOnlySnapshot(rm.pool, async (client) => {
      const cp = (await readCheckpoints(client, rm.schema, [AUDIT_LOG_PROJECTION_NAME])).get(AUDIT_LOG_PROJECTION_NAME)
      const column = CLAIM_COLUMNS[claim.kind]
      const r = await client.query(
        `select stream_name, stream_revision::text, global_position, event_id::text, type, schema_version,
                (extract(epoch from recorded_at) * 1000)::bigint::text as recorded_at_ms, payload, metadata
           from ${qualified(rm.schema, AUDIT_LOG)} a
          where a.${column} = $1 and a.type = 'CallbackQuarantined' and a.stream_name like 'quarantine-%'
            and (a.merchant_id = $2 or a.merchant_id is null)
          order by a.global_position`,
        [claim.id, claim.merchantId],
      )
      const decoded = QuarantinedRows.decode(r.rows)
      if (E.isLeft(decoded)) throw new Error(`audit_log: unexpected quarantine rows for ${claim.kind} ${claim.id}`)
      return { events: decoded.right.map((row) => recordedOfRow(row.stream_name, row)), checkpoint: cp?.position ?? undefined }
    })

  return {
    paymentView: (stream) => attempt('paymentView', () => stateOf('orders', stream, paymentViewOfRow)),
    refund: (stream) => attempt('refund', () => stateOf<Refund>('refunds', stream, (json) => decodeRefundView(json).state)),
    subscription: (stream) => attempt('subscription', () => stateOf<Subscription>('subscriptions', stream, (json) => decodeSubscriptionView(json).state)),
    openCreates: () => attempt('openCreates', openCreates),
    auditEvents: (stream) => attempt('auditEvents', () => auditEvents(stream)),
    quarantinedNaming: (claim) => attempt('quarantinedNaming', () => quarantinedNaming(claim)),
  }
}
