import * as E from 'fp-ts/lib/Either.js'
import type { Lease } from '../../application/ports/job-lock.ts'
import type { KnownBreakRow, ReadModelFailure, ScopedRefund } from '../../application/ports/read-models.ts'
import { describeRunStoreError, openRun, readRunStarted, supersedeRun } from '../../application/reconciliation-runs.ts'
import { makeAggregateStreamCache } from '../../application/stream-cache.ts'
import { orderKind, preload } from '../../application/streams.ts'
import { BANGKOK_OFFSET_MS, formatCalendarDate, parseCalendarDate } from '../../domain/bangkok-time.ts'
import type { ReconciliationRunStartedData, RunScope, RunTrigger } from '../../domain/reconciliation/events/index.ts'
import { isChecked, summarizeRun, type ItemRecord, type Run } from '../../domain/reconciliation/run.ts'
import type { Verdict } from '../../domain/reconciliation/verdict.ts'
import { addDays, compareDates } from '../../domain/subscription-schedule.ts'
import { RunStoreFailed, makeBatcher } from './batcher.ts'
import { ItemStoreFailed, checkPayment } from './check-payment.ts'
import { checkRefund } from './check-refund.ts'
import { checkSubscription } from './check-subscription.ts'
import { checkUnmatched, unmatchedPayments } from './check-unmatched.ts'
import { callsAtOnce, forEachConcurrently } from './concurrency.ts'
import type { ReconcileDeps, ReconcilePolicy, RunContext } from './context.ts'
import { runReport, type RunReport } from './report.ts'

/** Business days `from..to` (Bangkok, inclusive), or a sweep of the items still open. */
export type ScopeRequest = { readonly kind: 'days'; readonly from: string; readonly to: string } | { readonly kind: 'sweep'; readonly minAgeMs: number }

export type Progress = {
  readonly phase: 'payments' | 'refunds' | 'subscriptions' | 'unmatched callbacks'
  readonly checked: number
  readonly total: number
  /** Items checked by this process (a resumed run's earlier items excluded), for a rate. */
  readonly checkedHere: number
  readonly since: Date
}

export type ReconcileRequest = {
  readonly scope: ScopeRequest
  readonly concurrency: number
  /** Query and classify, append nothing (no evidence, no heal, no run). */
  readonly dryRun: boolean
  readonly trigger: RunTrigger
  readonly actor: string | null
  /** Graces are measured as of this instant (default: now). */
  readonly asOf?: Date
  readonly policy: ReconcilePolicy
  readonly batch?: { readonly maxItems: number; readonly maxMs: number }
  readonly onProgress?: (p: Progress) => void
  /** Stops taking items; what was checked is recorded, the run stays open and the next run resumes it. */
  readonly signal?: AbortSignal
  /** Called after each batch is appended, with the number of batches the run stream holds (fault injection in tests). */
  readonly onBatchRecorded?: (batches: number) => void
}

export type ReconcileFailure =
  | { readonly _tag: 'Busy'; readonly message: string }
  | { readonly _tag: 'LockFailure'; readonly message: string }
  | { readonly _tag: 'ReadModelFailure'; readonly message: string; readonly failure: ReadModelFailure }
  | { readonly _tag: 'StoreFailure'; readonly message: string }
  | { readonly _tag: 'Interrupted'; readonly runId: string; readonly checked: number }

export type ReconcileResult = {
  /** False for a dry run, and for a sweep that found nothing to check (nothing recorded). */
  readonly recorded: boolean
  readonly runId: string
  readonly verdict: Verdict
  readonly report: RunReport
}

const DAY_MS = 86_400_000
/** Order streams read in one round trip ahead of their checks (and the pages the run's cache holds). */
const PRELOAD_PAGE = 256
const PRELOAD_PAGES_KEPT = 4
/**
 * Items under way per gateway query allowed in flight: a check whose query has been answered waits
 * for its evidence append without holding a query's place, so the gateway keeps `concurrency` queries
 * in flight while the appends of the checks before go many to a round trip (issue 28).
 */
const ITEMS_PER_QUERY = 2

/**
 * Loads the items' streams a page at a time, one page ahead of the checks: `ready(i)` settles once
 * the page of item `i` is loaded (or its load failed: the checks then read their streams themselves)
 * and starts the next page's load.
 */
const pagedPreloader = (streams: ReadonlyArray<string>, load: (streams: ReadonlyArray<string>) => Promise<void>) => {
  const pages = new Map<number, Promise<void>>()
  const start = (page: number): Promise<void> => {
    let loading = pages.get(page)
    if (loading === undefined) {
      const from = page * PRELOAD_PAGE
      loading = from >= streams.length ? Promise.resolve() : load(streams.slice(from, from + PRELOAD_PAGE)).catch(() => undefined)
      pages.set(page, loading)
      pages.delete(page - PRELOAD_PAGES_KEPT)
    }
    return loading
  }
  return {
    ready: (i: number): Promise<void> => {
      const page = Math.floor(i / PRELOAD_PAGE)
      void start(page + 1)
      return start(page)
    },
  }
}
/** A run covers at most this many days (a year and a day). */
export const MAX_RUN_DAYS = 366

/** The Bangkok dates from `from` to `to` inclusive; Left with the rule when they are not a range. */
export const daysBetween = (from: string, to: string): E.Either<string, ReadonlyArray<string>> => {
  const a = parseCalendarDate(from)
  const b = parseCalendarDate(to)
  if (E.isLeft(a) || E.isLeft(b)) return E.left('from and to must be dates yyyy-MM-dd')
  if (compareDates(a.right, b.right) > 0) return E.left('to must not be before from')
  const days: string[] = []
  for (let d = a.right; compareDates(d, b.right) <= 0; d = addDays(d, 1)) {
    days.push(formatCalendarDate(d))
    if (days.length > MAX_RUN_DAYS) return E.left(`a run covers at most ${String(MAX_RUN_DAYS)} days`)
  }
  return E.right(days)
}

/** The instant the Bangkok day `day` ends. */
const endOfDay = (day: string): Date => {
  const d = parseCalendarDate(day)
  if (E.isLeft(d)) throw new RangeError(`not a date: ${day}`)
  return new Date(Date.UTC(d.right.year, d.right.month - 1, d.right.day) + DAY_MS - BANGKOK_OFFSET_MS)
}

const sameScope = (a: RunScope, b: RunScope): boolean => a.kind === b.kind && a.from === b.from && a.to === b.to

const failure = (message: string): ReconcileFailure => ({ _tag: 'StoreFailure', message })

const groupKnown = (known: ReadonlyArray<KnownBreakRow>): Map<string, KnownBreakRow[]> => {
  const byItem = new Map<string, KnownBreakRow[]>()
  for (const b of known) {
    const key = `${b.itemKind}:${b.itemId}`
    const list = byItem.get(key)
    if (list === undefined) byItem.set(key, [b])
    else list.push(b)
  }
  return byItem
}

const byOrder = (refunds: ReadonlyArray<ScopedRefund>): ReadonlyArray<ReadonlyArray<ScopedRefund>> => {
  const groups = new Map<string, ScopedRefund[]>()
  for (const r of refunds) {
    const g = groups.get(r.merchantOrderId)
    if (g === undefined) groups.set(r.merchantOrderId, [r])
    else g.push(r)
  }
  return [...groups.values()]
}

/**
 * One reconciliation run (issue 13): under the merchant's reconciliation lock, with the read models
 * caught up, it resumes the run of the same scope that died half-way (or supersedes runs of another
 * scope), lists the items in scope (orders and refunds created on its days, every one still open, the
 * items of every break not resolved, active subscriptions, verified callbacks about orders satang never
 * created), checks them with bounded concurrency (payments first, so that a refund whose payment is
 * healed is checked against the healed payment), records them in atomic batches, and completes.
 */
export const reconcile = async (deps: ReconcileDeps, req: ReconcileRequest): Promise<E.Either<ReconcileFailure, ReconcileResult>> => {
  const log = deps.log.child({ component: 'reconcile' })
  let lease: Lease | null = null
  if (!req.dryRun) {
    const acquired = await deps.lock.tryAcquire({ job: 'reconcile', merchantId: deps.merchantId })()
    if (E.isLeft(acquired)) return E.left({ _tag: 'LockFailure', message: `the reconciliation lock could not be taken: ${acquired.left.cause instanceof Error ? acquired.left.cause.message : 'database error'}` })
    if (acquired.right === null) return E.left({ _tag: 'Busy', message: `another reconciliation of merchant ${deps.merchantId} is running (one at a time); try again when it has finished` })
    lease = acquired.right
  }
  try {
    const result = await runUnderLock(deps, req, log)
    // Only a run that recorded events has something for `afterRun` (an anchor) to cover: a sweep that
    // changed nothing records nothing, and a dry run never does.
    if (E.isRight(result) && result.right.recorded && deps.afterRun !== undefined) await deps.afterRun(result.right.runId)
    return result
  } catch (e) {
    if (e instanceof ItemStoreFailed || e instanceof RunStoreFailed) return E.left(failure(e.message))
    throw e
  } finally {
    await lease?.release()
  }
}

const runUnderLock = async (deps: ReconcileDeps, req: ReconcileRequest, log: ReconcileDeps['log']): Promise<E.Either<ReconcileFailure, ReconcileResult>> => {
  await deps.readModelsCaughtUp()
  const readFailed = (f: ReadModelFailure): E.Either<ReconcileFailure, never> =>
    E.left({ _tag: 'ReadModelFailure', message: f.missing ? 'the read models do not exist yet: run satang migrate' : `the read models could not be read (${f.operation})`, failure: f })

  const known = await deps.queries.knownBreaks(deps.merchantId)()
  if (E.isLeft(known)) return readFailed(known.left)
  // Sweeps leave unfinished runs to the runs of days (which resume or supersede them).
  const sweep = req.scope.kind === 'sweep'
  const unfinished = req.dryRun || sweep ? E.right([]) : await deps.queries.unfinishedRuns(deps.merchantId)()
  if (E.isLeft(unfinished)) return readFailed(unfinished.left)

  const scope: RunScope = req.scope.kind === 'days' ? { kind: 'days', from: req.scope.from, to: req.scope.to } : { kind: 'sweep', from: null, to: null }
  const days = req.scope.kind === 'days' ? daysBetween(req.scope.from, req.scope.to) : E.right([])
  if (E.isLeft(days)) return E.left(failure(days.left))
  const resumable = unfinished.right.find((u) => sameScope(u.scope, scope))
  const runId = resumable?.runId ?? deps.newId()
  const storeDeps = { store: deps.store, now: deps.now, dryRun: req.dryRun }
  const superseded: string[] = []
  for (const u of unfinished.right) {
    if (u.runId === runId) continue
    const done = await supersedeRun(storeDeps, deps.merchantId, u.runId, runId, 'its process stopped before it completed; a run of another scope took over')
    if (E.isLeft(done)) return E.left(failure(`superseding run ${u.runId}: ${describeRunStoreError(done.left)}`))
    superseded.push(u.runId)
    log.warn({ runId: u.runId, by: runId }, 'an unfinished reconciliation run of another scope was superseded')
  }
  const previous = resumable === undefined ? E.right(null) : await readRunStarted(deps.store, deps.merchantId, runId)
  if (E.isLeft(previous)) return E.left(failure(describeRunStoreError(previous.left)))
  const before = previous.right

  const now = deps.now()
  const asOf = before?.parameters.asOf ?? req.asOf ?? now
  const policy: ReconcilePolicy = before === null ? req.policy : { notFoundGraceMs: before.parameters.notFoundGraceMs, stalePendingMs: before.parameters.stalePendingMs, chargeGraceMs: before.parameters.chargeGraceMs }
  const byItem = groupKnown(known.right)
  const open = known.right.filter((b) => b.status !== 'acknowledged')
  const dayRange = req.scope.kind === 'days' ? { from: req.scope.from, to: req.scope.to } : null
  const listing = await deps.queries.scope({
    merchantId: deps.merchantId,
    days: dayRange,
    openCreatedBefore: req.scope.kind === 'days' ? endOfDay(req.scope.to) : new Date(asOf.getTime() - req.scope.minAgeMs),
    // A sweep looks at pending items only; open breaks of settled items wait for the next run of days.
    alsoStreams: sweep ? [] : open.flatMap((b) => ((b.itemKind === 'payment' || b.itemKind === 'refund') && b.stream !== null ? [b.stream] : [])),
  })()
  if (E.isLeft(listing)) return readFailed(listing.left)
  const daySet = new Set(days.right)
  const unmatched =
    req.scope.kind === 'days' ? (await unmatchedPayments(deps)).filter((u) => daySet.has(u.day) || open.some((b) => b.itemKind === 'unmatched_callback' && b.itemId === u.merchantOrderId)) : []
  const subscriptions = req.scope.kind === 'days' ? listing.right.subscriptions : []
  const { payments, refunds } = listing.right
  const total = payments.length + refunds.length + subscriptions.length + unmatched.length
  // A sweep comes every few minutes: it writes its run only at its end, and only when it changed
  // something (a heal, a break detected or resolved); the heals themselves are on the items' streams.
  const deferred = sweep && !req.dryRun

  const started: ReconciliationRunStartedData = before ?? {
    runId,
    merchantId: deps.merchantId,
    scope,
    parameters: { concurrency: req.concurrency, asOf, notFoundGraceMs: policy.notFoundGraceMs, stalePendingMs: policy.stalePendingMs, chargeGraceMs: policy.chargeGraceMs },
    startedBy: { trigger: req.trigger, actor: req.actor },
    itemsInScope: total,
    startedAt: now,
  }
  const opened = await openRun({ ...storeDeps, dryRun: req.dryRun || deferred }, started)
  if (E.isLeft(opened)) return E.left(failure(describeRunStoreError(opened.left)))
  const writer = opened.right
  if (writer.resumed) log.info({ runId, checked: writer.state().batches.reduce((n, b) => n + b.items.length, 0) }, 'resuming a reconciliation run that stopped half-way')
  const query = callsAtOnce(req.concurrency)
  const run: RunContext = {
    // `concurrency` bounds the gateway queries in flight; the items under way are ITEMS_PER_QUERY times as many.
    deps: {
      ...deps,
      gateway: {
        queryPayment: (request) => () => query(deps.gateway.queryPayment(request)),
        queryRefund: (request) => () => query(deps.gateway.queryRefund(request)),
      },
    },
    runId,
    merchantId: deps.merchantId,
    policy: { asOf, ...policy },
    dryRun: req.dryRun,
    resumed: writer.resumed,
    startedAt: started.startedAt,
    known: byItem,
    recording: { store: deps.store, now: deps.now, newId: deps.newId, streamCache: makeAggregateStreamCache(PRELOAD_PAGE * PRELOAD_PAGES_KEPT) },
  }

  const batcher = makeBatcher(writer, { ...(req.batch ?? { maxItems: 1000, maxMs: 1000 }), ...(req.onBatchRecorded === undefined ? {} : { onRecorded: req.onBatchRecorded }) })
  const alreadyChecked = writer.state().batches.reduce((n, b) => n + b.items.length, 0)
  let checked = alreadyChecked
  let checkedHere = 0
  const since = deps.now()
  let phase: Progress['phase'] = 'payments'
  const stopping = (): boolean => req.signal?.aborted === true || batcher.failed()
  const done = (kind: string, id: string): boolean => isChecked(writer.state(), `${kind}:${id}`)
  const kept: ItemRecord[] = []
  const add = async (record: ItemRecord): Promise<void> => {
    if (deferred) kept.push(record)
    await batcher.add(record)
    checked += 1
    checkedHere += 1
    req.onProgress?.({ phase, checked, total: Math.max(total, checked), checkedHere, since })
  }

  const paymentsLeft = payments.filter((p) => !done('payment', p.merchantOrderId))
  // A dry run records nothing and reads each stream once, after its query: nothing to load ahead.
  const preloader = pagedPreloader(req.dryRun ? [] : paymentsLeft.map((p) => p.stream), (streams) => preload(run.recording, orderKind, streams))
  await forEachConcurrently(
    paymentsLeft.map((p, i) => ({ p, i })),
    req.concurrency * ITEMS_PER_QUERY,
    async ({ p, i }) => {
      await preloader.ready(i)
      await add(await checkPayment(run, p))
    },
    stopping,
  )
  phase = 'refunds'
  await forEachConcurrently(
    byOrder(refunds.filter((r) => !done('refund', r.merchantRefundId))),
    req.concurrency * ITEMS_PER_QUERY,
    async (group) => {
      for (const r of group) if (!stopping()) await add(await checkRefund(run, r))
    },
    stopping,
  )
  phase = 'subscriptions'
  await forEachConcurrently(
    subscriptions,
    req.concurrency * ITEMS_PER_QUERY,
    async (s) => {
      const dates = new Set([...daySet, ...open.flatMap((b) => (b.itemKind === 'subscription' && b.itemId.startsWith(`${s.merchantSubscribeId}@`) ? [b.day] : []))])
      for (const record of await checkSubscription(run, s, dates)) if (!done('subscription', record.checked.id)) await add(record)
    },
    stopping,
  )
  phase = 'unmatched callbacks'
  await forEachConcurrently(unmatched.filter((u) => !done('unmatched_callback', u.merchantOrderId)), req.concurrency * ITEMS_PER_QUERY, async (u) => add(await checkUnmatched(run, u)), stopping)
  await batcher.drain()
  if (req.signal?.aborted === true) return E.left({ _tag: 'Interrupted', runId, checked })

  let completed = await writer.complete(days.right)
  if (E.isLeft(completed)) return E.left(failure(describeRunStoreError(completed.left)))
  const changed = (r: Run): boolean => r.detected.size > 0 || r.resolved.size > 0 || r.healed.length > 0
  let recorded = !req.dryRun && !deferred
  if (deferred && changed(completed.right)) {
    const real = await openRun({ ...storeDeps, dryRun: false }, started)
    if (E.isLeft(real)) return E.left(failure(describeRunStoreError(real.left)))
    for (let i = 0; i < kept.length; i += 1000) {
      const done = await real.right.record(kept.slice(i, i + 1000))
      if (E.isLeft(done)) return E.left(failure(describeRunStoreError(done.left)))
    }
    completed = await real.right.complete(days.right)
    if (E.isLeft(completed)) return E.left(failure(describeRunStoreError(completed.left)))
    recorded = true
  }
  const finishedAt = deps.now()
  const completion = completed.right.completed ?? summarizeRun(completed.right, days.right, finishedAt)
  // A sweep that changed nothing records nothing and says so quietly.
  ;(recorded || req.dryRun ? log.info.bind(log) : log.debug.bind(log))({ runId, verdict: completion.verdict, counts: completion.counts, resumed: writer.resumed, recorded }, 'reconciliation run completed')
  return E.right({
    recorded,
    runId,
    verdict: completion.verdict,
    report: runReport(completed.right, { dryRun: req.dryRun, resumed: writer.resumed, supersededRuns: superseded, asOf, finishedAt, completion }),
  })
}

