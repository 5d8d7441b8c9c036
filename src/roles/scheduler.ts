import type { ProcessContext, StartedRole } from './role.ts'

/**
 * The scheduler role: the daily reconciliation and the sweeps of stale items. It does its work once
 * the reconciliation engine lands (issue 13); until then the role starts, answers /healthz and says so.
 */
export const startSchedulerRole = (ctx: ProcessContext): StartedRole => {
  ctx.log.info({ role: 'scheduler' }, 'the scheduler role has no work yet')
  return {
    role: 'scheduler',
    routes: [],
    checks: [],
    listening: () => undefined,
    summary: () => ['scheduler: nothing scheduled in this version'],
    stop: async () => undefined,
  }
}
