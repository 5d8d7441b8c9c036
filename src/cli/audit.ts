import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { auditTrail, type AuditEntry, type AuditUndecodable } from '../application/audit.ts'
import { streamOf, type AuditKind } from '../application/index.ts'
import { checkMerchantId } from '../adapters/sandbox/merchants.ts'
import { parseOrderStreamName } from '../domain/order/index.ts'
import { parseRefundStreamName } from '../domain/refund/index.ts'
import { parseSubscriptionStreamName } from '../domain/subscription/index.ts'
import { StartupError, loadConfig, makeEventStore, merchantIdOf, openDatabaseForTool, rootLogger } from '../main.ts'
import { EXIT, UsageError } from './io.ts'

type AuditOptions = { kind?: string; merchantId?: string; json?: boolean }

const KINDS: ReadonlyArray<AuditKind> = ['order', 'refund', 'subscription']
const isKind = (s: string): s is AuditKind => (KINDS as ReadonlyArray<string>).includes(s)

/** A stream name as given (`order-<merchant_id>-<id>`, …, `unmatched-callbacks-<merchant_id>`), or null. */
const asStreamName = (arg: string): string | null =>
  parseOrderStreamName(arg) !== null || parseRefundStreamName(arg) !== null || parseSubscriptionStreamName(arg) !== null || /^unmatched-callbacks-14\d{16,18}$/.test(arg) ? arg : null

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

/** `satang audit <id>`: the audit trail of an order, refund or subscription, from the event store. */
export const registerAuditCommand = (program: Command, setExitCode: (code: number) => void): void => {
  program
    .command('audit')
    .description('print the audit trail of an order, refund or subscription: every event in order, with its source, times, signature result and payload')
    .argument('<id>', 'a merchant_order_id (or, with --kind, a merchant_refund_id / merchant_subscribe_id), or a stream name such as order-140000000000000001-ORD-1')
    .option('--kind <kind>', 'what <id> names: order, refund or subscription (default: order, unless <id> is a stream name)')
    .option('--merchant-id <id>', 'the merchant (default: SATANG_MERCHANT_ID, or the built-in sandbox merchant)')
    .option('--json', 'print the trail as JSON: { stream, events } with the events as GET /v1/audit/{kind}/{id} returns them')
    .addHelpText('after', '\nReads the event store configured by SATANG_* (see README "Configuration"). Exit codes: 0 found, 1 no such stream, 2 bad input, 3 the store failed.')
    .action(async (id: string, opts: AuditOptions) => {
      if (opts.kind !== undefined && !isKind(opts.kind)) throw new UsageError(`--kind must be order, refund or subscription, got ${JSON.stringify(opts.kind)}`)
      if (opts.merchantId !== undefined && E.isLeft(checkMerchantId(opts.merchantId))) throw new UsageError(`--merchant-id must be 18 digits starting with 14`)
      let config
      try {
        config = await loadConfig()
      } catch (e) {
        if (e instanceof StartupError) throw new UsageError(e.message)
        throw e
      }
      const given = opts.kind === undefined ? asStreamName(id) : null
      let stream: string
      if (given !== null) stream = given
      else {
        const merchantId = opts.merchantId ?? merchantIdOf(config)
        if (merchantId === undefined) throw new UsageError('--merchant-id is needed (SATANG_MERCHANT_ID is not set)')
        if (id === '' || id.length > 64) throw new UsageError('<id> must be 1 to 64 characters')
        stream = streamOf(opts.kind !== undefined && isKind(opts.kind) ? opts.kind : 'order', merchantId, id)
      }

      const log = rootLogger({ ...config, SATANG_LOG_LEVEL: config.SATANG_LOG_LEVEL === 'info' ? 'warn' : config.SATANG_LOG_LEVEL })
      let db
      try {
        db = await openDatabaseForTool(config, log)
      } catch (e) {
        if (!(e instanceof StartupError)) throw e
        process.stderr.write(`satang: ${e.message}\n`)
        setExitCode(EXIT.failure)
        return
      }
      const store = makeEventStore(config, db, log)
      try {
        const trail = await auditTrail(store, stream)()
        if (E.isLeft(trail)) {
          process.stderr.write(`satang: the event store could not be read (${trail.left.operation})\n`)
          setExitCode(EXIT.failure)
          return
        }
        if (trail.right === undefined) {
          process.stderr.write(`satang: no events in stream ${stream}\n`)
          setExitCode(EXIT.negative)
          return
        }
        if (opts.json === true) process.stdout.write(`${JSON.stringify(trail.right, null, 2)}\n`)
        else process.stdout.write(`stream ${trail.right.stream} (${String(trail.right.events.length)} events)\n${trail.right.events.map(lineOf).join('\n')}\n`)
        setExitCode(EXIT.ok)
      } finally {
        await store.close()
        await db.close()
      }
    })
}
