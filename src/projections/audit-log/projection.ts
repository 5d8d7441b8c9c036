import * as t from 'io-ts'
import type { Json, JsonObject } from '../../application/ports/event-store.ts'
import { parseOrderStreamName } from '../../domain/order/stream.ts'
import { parseRefundStreamName } from '../../domain/refund/stream.ts'
import { parseSubscriptionStreamName } from '../../domain/subscription/stream.ts'
import { unnestParameters, unnestSelect, type Columns } from '../sql.ts'
import { qualified, type ProjectedEvent, type Projection, type ProjectionTarget } from '../types.ts'

/*
 * `audit_log`: every event of every stream, flattened, one row per event, for auditors' SQL and for
 * the audit trail (src/application/audit.ts). The payload and metadata are kept exactly as stored
 * (`payload` is the event's data at its stored schema version, never upcast); the other columns are
 * lookups and readable forms of what they hold. Ids for lookup come from the stream name first, then
 * from the event's data, then from the raw gateway payload it keeps (`payload`, `request`,
 * `response`): a refund's events are found by the refund's and by its order's ids; a rejected or
 * quarantined callback by whatever ids it claimed (`claimed`, or its raw payload), so `satang audit`
 * finds the quarantined callbacks naming an order by index, never by reading the quarantine. A batch
 * is one insert statement.
 */

export const AUDIT_LOG_PROJECTION_NAME = 'audit_log'
export const AUDIT_LOG = 'audit_log'

/** The lookup columns, each indexed. */
export const AUDIT_LOG_ID_COLUMNS = [
  'merchant_id',
  'merchant_order_id',
  'merchant_refund_id',
  'merchant_subscribe_id',
  'gateway_order_id',
  'refund_order_id',
  'recurring_bill_id',
] as const
type IdColumn = (typeof AUDIT_LOG_ID_COLUMNS)[number]
type Ids = { -readonly [K in IdColumn]: string | null }

const createTables = (schema: string): ReadonlyArray<string> => {
  const log = qualified(schema, AUDIT_LOG)
  return [
    `create table ${log} (
      global_position       text collate "C" not null,
      stream_name           text collate "C" not null,
      stream_revision       bigint not null,
      event_id              uuid not null,
      type                  text not null,
      schema_version        integer not null,
      source                text not null,
      occurred_at           timestamptz,
      recorded_at           timestamptz not null,
      occurred_at_bangkok   timestamp generated always as (occurred_at at time zone 'Asia/Bangkok') stored,
      recorded_at_bangkok   timestamp generated always as (recorded_at at time zone 'Asia/Bangkok') stored,
      correlation_id        text,
      causation_id          text,
      trace_id              text,
      signature_verified    boolean,
      signature_reason      text,
      payload               jsonb not null,
      metadata              jsonb not null,
      merchant_id           text,
      merchant_order_id     text,
      merchant_refund_id    text,
      merchant_subscribe_id text,
      gateway_order_id      text,
      refund_order_id       text,
      recurring_bill_id     text,
      constraint ${AUDIT_LOG}_pkey primary key (event_id),
      constraint ${AUDIT_LOG}_position_key unique (global_position),
      constraint ${AUDIT_LOG}_stream_key unique (stream_name, stream_revision)
    )`,
    `comment on table ${log} is 'satang read model audit_log: every event flattened, in the order of the log (global_position); payload and metadata as stored'`,
    // One index per id, with the log order: "everything about X, in order" is an index range scan.
    ...AUDIT_LOG_ID_COLUMNS.map((c) => `create index ${AUDIT_LOG}_${c}_idx on ${log} (${c}, global_position) where ${c} is not null`),
    `create index ${AUDIT_LOG}_correlation_idx on ${log} (correlation_id) where correlation_id is not null`,
    `create index ${AUDIT_LOG}_recorded_at_idx on ${log} (recorded_at)`,
  ]
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => t.UnknownRecord.is(u)

const stringAt = (o: unknown, key: string): string | null => {
  if (!isRecord(o)) return null
  const v = o[key]
  return typeof v === 'string' && v !== '' ? v : null
}

// Where each lookup id sits: its key in an event's data (newest shape), and in the raw gateway fields it keeps.
const ID_KEYS: ReadonlyArray<readonly [IdColumn, string, string]> = [
  ['merchant_id', 'merchantId', 'merchant_id'],
  ['merchant_order_id', 'merchantOrderId', 'merchant_order_id'],
  ['merchant_refund_id', 'merchantRefundId', 'merchant_refund_id'],
  ['merchant_subscribe_id', 'merchantSubscribeId', 'merchant_subscribe_id'],
  ['gateway_order_id', 'gatewayOrderId', 'order_id'],
  ['refund_order_id', 'refundOrderId', 'refund_order_id'],
  ['recurring_bill_id', 'recurringBillId', 'recurring_bill_id'],
]
const RAW_PAYLOADS = ['payload', 'request', 'response'] as const

const UNMATCHED_CALLBACKS = /^unmatched-callbacks-(14\d{16,18})$/

/** The ids of the event's stream name (order, refund, subscription, unmatched callbacks). */
const idsOfStream = (stream: string): Partial<Ids> => {
  const order = parseOrderStreamName(stream)
  if (order !== null) return { merchant_id: order.merchantId, merchant_order_id: order.merchantOrderId }
  const refund = parseRefundStreamName(stream)
  if (refund !== null) return { merchant_id: refund.merchantId, merchant_refund_id: refund.merchantRefundId }
  const subscription = parseSubscriptionStreamName(stream)
  if (subscription !== null) return { merchant_id: subscription.merchantId, merchant_subscribe_id: subscription.merchantSubscribeId }
  const unmatched = UNMATCHED_CALLBACKS.exec(stream)?.[1]
  return unmatched === undefined ? {} : { merchant_id: unmatched }
}

/** The lookup ids of one event: its stream name's, then its data's (and the ids it claims), then its raw gateway payload's. */
export const auditIdsOf = (e: Pick<ProjectedEvent, 'streamName' | 'event'>): Ids => {
  const data: unknown = e.event.data
  const fromStream = idsOfStream(e.streamName)
  const claimed = isRecord(data) ? data['claimed'] : undefined
  const raws = RAW_PAYLOADS.map((k) => (isRecord(data) ? data[k] : undefined)).filter(isRecord)
  const pick = (column: IdColumn, dataKey: string, wireKey: string): string | null =>
    fromStream[column] ?? stringAt(data, dataKey) ?? stringAt(claimed, dataKey) ?? raws.reduce<string | null>((found, raw) => found ?? stringAt(raw, wireKey), null)
  const ids: Ids = {
    merchant_id: null,
    merchant_order_id: null,
    merchant_refund_id: null,
    merchant_subscribe_id: null,
    gateway_order_id: null,
    refund_order_id: null,
    recurring_bill_id: null,
  }
  for (const [column, dataKey, wireKey] of ID_KEYS) ids[column] = pick(column, dataKey, wireKey)
  return ids
}

/** A valid instant as ISO text, else null (the metadata column keeps the text as it was). */
const instantOrNull = (s: Json | undefined): string | null => {
  if (typeof s !== 'string') return null
  const d = new Date(s)
  return Number.isNaN(d.getTime()) ? null : d.toISOString()
}

/** The row of one event (instants as ISO text). Exported for tests. */
export const auditRowOf = (e: ProjectedEvent): JsonObject => {
  const m = e.metadata
  const signature = m['signature']
  const verified = isRecord(signature) && typeof signature['verified'] === 'boolean' ? signature['verified'] : null
  return {
    global_position: e.position,
    stream_name: e.streamName,
    stream_revision: e.streamRevision.toString(),
    event_id: e.eventId,
    type: e.event.type,
    schema_version: e.storedSchemaVersion,
    source: m.source,
    occurred_at: instantOrNull(m.recordedAt),
    recorded_at: e.recordedAt.toISOString(),
    correlation_id: m.correlationId,
    causation_id: m.causationId,
    trace_id: stringAt(m, 'traceId') ?? stringAt(e.event.data, 'traceId'),
    signature_verified: verified,
    signature_reason: verified === null ? null : stringAt(signature, 'reason'),
    payload: e.storedData,
    metadata: m,
    ...auditIdsOf(e),
  }
}

/** The columns of a row, in the order of the insert. */
const COLUMNS: Columns = [
  ['global_position', 'text'],
  ['stream_name', 'text'],
  ['stream_revision', 'bigint'],
  ['event_id', 'uuid'],
  ['type', 'text'],
  ['schema_version', 'integer'],
  ['source', 'text'],
  ['occurred_at', 'timestamptz'],
  ['recorded_at', 'timestamptz'],
  ['correlation_id', 'text'],
  ['causation_id', 'text'],
  ['trace_id', 'text'],
  ['signature_verified', 'boolean'],
  ['signature_reason', 'text'],
  ['payload', 'jsonb'],
  ['metadata', 'jsonb'],
  ...AUDIT_LOG_ID_COLUMNS.map((c) => [c, 'text'] as const),
]
const INSERTED = COLUMNS.map(([n]) => n).join(', ')
const COLUMNS_WITHOUT_PAYLOADS = COLUMNS.filter(([n]) => n !== 'payload' && n !== 'metadata')

const apply = async ({ client, schema, eventTable }: ProjectionTarget, events: ReadonlyArray<ProjectedEvent>): Promise<void> => {
  if (events.length === 0) return
  // The whole batch in one statement. The projector applies each event exactly once, so an event met
  // twice is a defect: the unique keys stop the batch rather than hide it.
  const rows = events.map(auditRowOf)
  if (eventTable === undefined) {
    await client.query(`insert into ${qualified(schema, AUDIT_LOG)} (${INSERTED}) ${unnestSelect(COLUMNS, 1)}`, unnestParameters(COLUMNS, rows))
    return
  }
  // The log is in this database: payload and metadata are copied there, already jsonb, instead of
  // being sent back and parsed again (most of the bytes of a batch).
  await client.query(
    `insert into ${qualified(schema, AUDIT_LOG)} (${INSERTED})
     select ${COLUMNS.map(([c]) => (c === 'payload' ? 'e.data' : c === 'metadata' ? 'e.metadata' : `x.${c}`)).join(', ')}
       from (${unnestSelect(COLUMNS_WITHOUT_PAYLOADS, 1)}) as x
       join ${eventTable} e on e.event_id = x.event_id`,
    unnestParameters(COLUMNS_WITHOUT_PAYLOADS, rows),
  )
}

export const auditLogProjection: Projection = {
  name: AUDIT_LOG_PROJECTION_NAME,
  description: 'audit_log: every event flattened (stream, revisions, positions, type, schema version, source, times in UTC and Bangkok, signature result, payload), indexed by every merchant and gateway id',
  streams: 'all',
  tables: [AUDIT_LOG],
  createTables,
  apply,
}
