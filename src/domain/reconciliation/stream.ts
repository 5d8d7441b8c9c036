import { keyOf } from '../events/natural-key.ts'
import type { BreakEvent, RunEvent } from './events/index.ts'

/** The stream of one run: `reconciliation-<merchant_id>-<run_id>`. */
export const runStreamName = (merchantId: string, runId: string): string => `reconciliation-${merchantId}-${runId}`

/** The stream of one break's own events (acknowledgement): `reconciliation-<merchant_id>-break-<break_id>`. */
export const breakStreamName = (merchantId: string, breakId: string): string => `reconciliation-${merchantId}-break-${breakId}`

/** The natural key of an event of a run stream: one start, one batch per number, one detection and resolution per break, one heal per item, one end. */
export const runEventNaturalKey = (stream: string, e: RunEvent): string => {
  switch (e.type) {
    case 'ReconciliationRunStarted':
    case 'ReconciliationRunCompleted':
    case 'ReconciliationRunSuperseded':
      return keyOf(stream, e.type)
    case 'ReconciliationItemsChecked':
      return keyOf(stream, e.type, String(e.data.batch))
    case 'ReconciliationBreakDetected':
    case 'ReconciliationBreakResolved':
      return keyOf(stream, e.type, e.data.breakId)
    case 'ReconciliationItemHealed':
      return keyOf(stream, e.type, e.data.item.kind, e.data.item.id)
  }
}

export const breakEventNaturalKey = (stream: string, e: BreakEvent): string => keyOf(stream, e.type)
