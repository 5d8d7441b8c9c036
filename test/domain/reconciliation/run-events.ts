import type { RunEvent } from '../../../src/domain/reconciliation/events/index.ts'
import { decideRun, evolveRunState, initialRunState, type RunCommand } from '../../../src/domain/reconciliation/run.ts'

/** The events a run stream holds after `commands`, each decided on the events before it (shared by tests and benches). */
export const runEventsOf = (commands: ReadonlyArray<RunCommand>): ReadonlyArray<RunEvent> =>
  commands.reduce<ReadonlyArray<RunEvent>>((events, c) => {
    const decided = decideRun(c, events.reduce(evolveRunState, initialRunState))
    if (decided._tag === 'Left') throw new Error(`run command refused: ${decided.left._tag}`)
    return [...events, ...decided.right]
  }, [])
