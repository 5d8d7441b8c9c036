import type { ProcessContext, StartedRole } from './role.ts'

/**
 * The relay role: publishes the event log to Kafka. It does its work once the Kafka relay lands
 * (issue 14); until then the role starts, answers /healthz and says so.
 */
export const startRelayRole = (ctx: ProcessContext): StartedRole => {
  ctx.log.info({ role: 'relay' }, 'the relay role has no work yet: nothing is published to Kafka')
  return {
    role: 'relay',
    routes: [],
    checks: [],
    listening: () => undefined,
    summary: () => ['relay: no Kafka relay in this version'],
    stop: async () => undefined,
  }
}
