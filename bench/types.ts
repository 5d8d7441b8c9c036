import type { Logger } from '../src/logger.ts'

/** One measured figure. `target` is the goal for this machine (2 cores), checked and reported. */
export type BenchResult = {
  readonly name: string
  readonly value: number
  readonly unit: string
  readonly target?: { readonly op: '>=' | '<='; readonly value: number }
}

export type BenchContext = {
  /** A PostgreSQL server the bench may create and drop its own databases/schemas in. */
  readonly databaseUrl: string
  readonly log: Logger
}

export type BenchModule = { readonly run: (ctx: BenchContext) => Promise<ReadonlyArray<BenchResult>> }
