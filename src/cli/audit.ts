import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { readAuditTrail, readQuarantinedNaming, type AuditEntry, type AuditUndecodable, type QuarantineClaim, type QuarantinedEntry } from '../application/audit.ts'
import { auditIdProblem, streamOf, type AuditKind } from '../application/index.ts'
import { MerchantId } from '../domain/gateway/fields.ts'
import { parseOrderStreamName } from '../domain/order/index.ts'
import { parseRefundStreamName } from '../domain/refund/index.ts'
import { parseSubscriptionStreamName } from '../domain/subscription/index.ts'
import { makeReadModelQueries } from '../projections/queries.ts'
import { makeEventStore, readModelsOf } from '../composition/database.ts'
import { merchantIdOf } from '../composition/gateway.ts'
import { registerAuditVerifyCommand } from './audit-verify.ts'
import { configOrUsage, openToolDatabase, quietLogger } from './tool-config.ts'
import { EXIT, UsageError } from './io.ts'

type AuditOptions = { kind?: string; merchantId?: string; json?: boolean }

const KINDS: ReadonlyArray<AuditKind> = ['order', 'refund', 'subscription']
const isKind = (s: string): s is AuditKind => (KINDS as ReadonlyArray<string>).includes(s)

/** An argument as echoed in a message: its start only, when it is long. */
const shortened = (arg: string): string => (arg.length <= 80 ? arg : `${arg.slice(0, 40)}…`)

/** A stream name as given (`order-<merchant_id>-<id>`, …, `unmatched-callbacks-<merchant_id>`), or null. */
const asStreamName = (arg: string): string | null =>
  parseOrderStreamName(arg) !== null || parseRefundStreamName(arg) !== null || parseSubscriptionStreamName(arg) !== null || /^unmatched-callbacks-14\d{16,18}$/.test(arg) ? arg : null

/** What quarantined callbacks would claim to be about, for a stream of an order, refund or subscription. */
const claimOf = (stream: string): QuarantineClaim | null => {
  const order = parseOrderStreamName(stream)
  if (order !== null) return { merchantId: order.merchantId, kind: 'order', id: order.merchantOrderId }
  const refund = parseRefundStreamName(stream)
  if (refund !== null) return { merchantId: refund.merchantId, kind: 'refund', id: refund.merchantRefundId }
  const subscription = parseSubscriptionStreamName(stream)
  return subscription === null ? null : { merchantId: subscription.merchantId, kind: 'subscription', id: subscription.merchantSubscribeId }
}

const quarantineLineOf = (e: QuarantinedEntry): string => {
  const reason = t.UnknownRecord.is(e.data) && typeof e.data['reason'] === 'string' ? e.data['reason'] : 'refused'
  const verified = t.UnknownRecord.is(e.signature) && e.signature['verified'] === true
  const parts = [e.recorded_at, `UNVERIFIED ${reason}`, verified ? 'signature verified (the fields were refused)' : signatureText(e.signature), `in ${e.stream}`]
  return `${parts.join('  ')}\n    ${JSON.stringify(e.data)}`
}

const signatureText = (s: AuditEntry['signature']): string => {
  if (!t.UnknownRecord.is(s)) return ''
  const reason = s['reason']
  return s['verified'] === true ? 'signature verified' : `signature REJECTED${typeof reason === 'string' ? ` (${reason})` : ''}`
}

const lineOf = (e: AuditEntry | AuditUndecodable): string => {
  if ('undecodable' in e) return `#${String(e.stream_revision)}  UNDECODABLE  ${e.undecodable}  (event ${e.event_id}, position ${e.position})`
  const parts = [`#${String(e.stream_revision)}`, e.recorded_at, `${e.type} v${String(e.schema_version)}`, `source ${e.source}`, signatureText(e.signature), typeof e.trace_id === 'string' ? `trace_id ${e.trace_id}` : '']
  return `${parts.filter((p) => p !== '').join('  ')}\n    ${JSON.stringify(e.data)}`
}

const quarantineText = (stream: string, entries: ReadonlyArray<QuarantinedEntry>): string =>
  `quarantined callbacks naming ${stream} (${String(entries.length)}; UNVERIFIED, not part of its history)\n${entries.map(quarantineLineOf).join('\n')}\n`

/** `satang audit <id>`: the trail, from the `audit_log` read model completed from the event store (or the store alone). */
const printTrail = async (id: string, opts: AuditOptions, setExitCode: (code: number) => void): Promise<void> => {
  if (opts.kind !== undefined && !isKind(opts.kind)) throw new UsageError(`--kind must be order, refund or subscription, got ${JSON.stringify(opts.kind)}`)
  if (opts.merchantId !== undefined && !MerchantId.is(opts.merchantId)) throw new UsageError(`--merchant-id must be 18 digits starting with 14`)
  const config = await configOrUsage()
  const given = opts.kind === undefined ? asStreamName(id) : null
  let stream: string
  if (given !== null) stream = given
  else {
    const merchantId = opts.merchantId ?? merchantIdOf(config)
    if (merchantId === undefined) throw new UsageError('--merchant-id is needed (SATANG_MERCHANT_ID is not set)')
    const kind = opts.kind !== undefined && isKind(opts.kind) ? opts.kind : 'order'
    const problem = auditIdProblem(kind, id)
    if (problem !== null) {
      const others = opts.kind === undefined ? '; for a refund or a subscription give --kind, or give a stream name such as order-<merchant_id>-<id>' : ''
      throw new UsageError(`<id> ${JSON.stringify(shortened(id))} is not a ${problem.field}: it ${problem.rules.join(' and ')}${others}`)
    }
    stream = streamOf(kind, merchantId, id)
  }

  const log = quietLogger(config)
  const db = await openToolDatabase(config, log, setExitCode)
  if (db === undefined) return
  const store = makeEventStore(config, db, log)
  try {
    // The read model when it exists (completed with any newer events from the store), else the store.
    const reads = { store, readModels: makeReadModelQueries(readModelsOf(db)) }
    const trail = await readAuditTrail(reads, stream)()
    const claim = claimOf(stream)
    // Found by the audit log's index of claimed ids (completed from the store past its checkpoint), never by reading the quarantine.
    const quarantined = claim === null ? E.right<never, ReadonlyArray<QuarantinedEntry>>([]) : await readQuarantinedNaming(reads, claim)()
    if (E.isLeft(trail) || E.isLeft(quarantined)) {
      const failed = E.isLeft(trail) ? trail.left : E.isLeft(quarantined) ? quarantined.left : undefined
      process.stderr.write(`satang: the event store could not be read (${failed?.operation ?? 'read'})\n`)
      setExitCode(EXIT.failure)
      return
    }
    // Callbacks quarantined as naming it are shown beside its trail, never in it: nothing verified them.
    const aside = quarantined.right
    if (trail.right === undefined) {
      if (aside.length > 0 && opts.json !== true) process.stdout.write(quarantineText(stream, aside))
      if (aside.length > 0 && opts.json === true) process.stdout.write(`${JSON.stringify({ stream, events: [], quarantined: aside }, null, 2)}\n`)
      process.stderr.write(`satang: no events in stream ${stream}\n`)
      setExitCode(EXIT.negative)
      return
    }
    if (opts.json === true) process.stdout.write(`${JSON.stringify({ ...trail.right, quarantined: aside }, null, 2)}\n`)
    else process.stdout.write(`stream ${trail.right.stream} (${String(trail.right.events.length)} events)\n${trail.right.events.map(lineOf).join('\n')}\n${aside.length > 0 ? quarantineText(stream, aside) : ''}`)
    setExitCode(EXIT.ok)
  } finally {
    await store.close()
    await db.close()
  }
}


/** `satang audit <id>` and `satang audit verify`. */
export const registerAuditCommand = (program: Command, setExitCode: (code: number) => void): void => {
  const audit = program
    .command('audit')
    .description('print the audit trail of an order, refund or subscription: every event in order, with its source, times, signature result and payload')
    .argument('<id>', 'a merchant_order_id (or, with --kind, a merchant_refund_id / merchant_subscribe_id), or a stream name such as order-140000000000000001-ORD-1')
    .option('--kind <kind>', 'what <id> names: order, refund or subscription (default: order, unless <id> is a stream name)')
    .option('--merchant-id <id>', 'the merchant (default: SATANG_MERCHANT_ID, or the built-in sandbox merchant)')
    .option('--json', 'print the trail as JSON: { stream, events, quarantined } with the events as GET /v1/audit/{kind}/{id} returns them, and the quarantined callbacks naming it (unverified)')
    // `satang audit help` audits an order named "help"; help is --help.
    .helpCommand(false)
    .addHelpText(
      'after',
      '\nReads the audit_log read model when it exists, completed with newer events from the event store configured by SATANG_* (see docs/operations.md "Configuration"); else the event store. Exit codes: 0 found, 1 no such stream, 2 bad input, 3 the store failed.\n\n`satang audit verify` checks the event log\'s tamper evidence (see satang audit verify --help).',
    )
    .action(async (id: string, opts: AuditOptions) => printTrail(id, opts, setExitCode))

  registerAuditVerifyCommand(audit, setExitCode, (opts) => printTrail('verify', opts, setExitCode))
}
