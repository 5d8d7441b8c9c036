import type { Logger } from '../src/logger.ts'

/** A goal of the issue for this machine's kind, on the figure itself or on its ratio to the baseline. */
export type Target = { readonly on: 'value' | 'ratio'; readonly op: '>=' | '<=' | '<'; readonly value: number }

/**
 * One measured figure. `baseline` is the bare counterpart measured in the same run (the floor or the
 * ceiling satang is compared with), `ratio` the comparison: for rates satang ÷ baseline, for latencies
 * baseline ÷ satang, so that 1 is "as good as bare" and higher is better either way.
 */
export type BenchResult = {
  readonly name: string
  readonly value: number
  readonly unit: string
  readonly baseline?: { readonly name: string; readonly value: number }
  readonly ratio?: number
  readonly targets?: ReadonlyArray<Target>
  /** Anything else worth keeping in the JSON (samples, per-phase counts). */
  readonly detail?: unknown
  /** Legacy single target on the value (the older benches). */
  readonly target?: { readonly op: '>=' | '<='; readonly value: number }
}

/** Sizes of a run: the defaults, or the small ones of `--quick`, or what the flags say. */
export type BenchSizes = {
  /** Events in the store for the first column of the store figures and for projection catch-up. */
  readonly events: number
  /** Events in the store for the second column (the "flat as the log grows" comparison) and the rebuild. */
  readonly largeEvents: number
  /** New notifications per run (each then redelivered once). */
  readonly notifications: number
  /** Seconds each append figure is measured for, per round. */
  readonly appendSeconds: number
  /** Rounds of each store figure, bare and satang alternating. */
  readonly rounds: number
  /** Seconds of live traffic for the live-delivery figure. */
  readonly liveSeconds: number
  /** Events per second the 8 live writers append together. */
  readonly liveRate: number
  /** Minutes of redeliveries after the new notifications, to watch the RSS of `satang up` (0: one pass). */
  readonly soakMinutes: number
  /** Checkouts in the log for the memory group's second, larger size (0: none). */
  readonly orders: number
  /** Paid orders the reconcile group reconciles against the sandbox. */
  readonly reconcileOrders: number
}

export type BenchContext = {
  /** A PostgreSQL server the bench may create and drop its own databases/schemas in. */
  readonly databaseUrl: string
  readonly log: Logger
  readonly sizes: BenchSizes
  readonly quick: boolean
  /** The Memory step runs `satang project --rebuild` (one pass per read model) instead of a catch-up from empty read models. */
  readonly rebuildCommand: boolean
  /** A progress line on stderr (long steps say where they are). */
  readonly progress: (line: string) => void
  /** State shared by the groups of one run (the event log loaded once, the 100k figures for the 1M comparison). */
  readonly shared: Map<string, unknown>
}

export type BenchModule = { readonly run: (ctx: BenchContext) => Promise<ReadonlyArray<BenchResult>> }
