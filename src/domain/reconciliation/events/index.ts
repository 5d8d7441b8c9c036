import type { ReconciliationBreakAcknowledged } from './reconciliation-break-acknowledged.ts'
import type { ReconciliationBreakDetected } from './reconciliation-break-detected.ts'
import type { ReconciliationBreakResolved } from './reconciliation-break-resolved.ts'
import type { ReconciliationItemHealed } from './reconciliation-item-healed.ts'
import type { ReconciliationItemsChecked } from './reconciliation-items-checked.ts'
import type { ReconciliationRunCompleted } from './reconciliation-run-completed.ts'
import type { ReconciliationRunStarted } from './reconciliation-run-started.ts'
import type { ReconciliationRunSuperseded } from './reconciliation-run-superseded.ts'

export * from './reconciliation-break-acknowledged.ts'
export * from './reconciliation-break-detected.ts'
export * from './reconciliation-break-resolved.ts'
export * from './reconciliation-item-healed.ts'
export * from './reconciliation-items-checked.ts'
export * from './reconciliation-run-completed.ts'
export * from './reconciliation-run-started.ts'
export * from './reconciliation-run-superseded.ts'
export * from './values.ts'

/** Every event of a run stream (`reconciliation-<merchant_id>-<run_id>`). */
export type RunEvent =
  | ReconciliationRunStarted
  | ReconciliationItemsChecked
  | ReconciliationBreakDetected
  | ReconciliationBreakResolved
  | ReconciliationItemHealed
  | ReconciliationRunCompleted
  | ReconciliationRunSuperseded

/** Every event of a break's own stream (`reconciliation-<merchant_id>-break-<break_id>`). */
export type BreakEvent = ReconciliationBreakAcknowledged

export type ReconciliationEvent = RunEvent | BreakEvent

export const RUN_EVENT_TYPES: ReadonlyArray<RunEvent['type']> = [
  'ReconciliationRunStarted',
  'ReconciliationItemsChecked',
  'ReconciliationBreakDetected',
  'ReconciliationBreakResolved',
  'ReconciliationItemHealed',
  'ReconciliationRunCompleted',
  'ReconciliationRunSuperseded',
]

const runTypes: ReadonlySet<string> = new Set(RUN_EVENT_TYPES)

export const isRunEvent = <Ev extends { readonly type: string }>(e: Ev): e is Extract<Ev, RunEvent> => runTypes.has(e.type)
export const isBreakEvent = <Ev extends { readonly type: string }>(e: Ev): e is Extract<Ev, BreakEvent> => e.type === 'ReconciliationBreakAcknowledged'
