// One satang process running the projector (the orders read model), for
// test/projections/projector-processes.int.test.ts: `node test/projections/projector-process.ts` with
// PROJ_DATABASE_URL, PROJ_EVENT_SCHEMA, PROJ_SCHEMA and PROJ_BATCH. Prints `started`; stops on a line on stdin.
import { createInterface } from 'node:readline'
import { Pool } from 'pg'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { silentLogger } from '../../src/logger.ts'
import { ordersProjection } from '../../src/projections/orders/projection.ts'
import { startProjector } from '../../src/projections/projector.ts'

const env = (name: string): string => {
  const v = process.env[name]
  if (v === undefined || v === '') throw new Error(`${name} is required`)
  return v
}

const log = silentLogger()
const pool = new Pool({ connectionString: env('PROJ_DATABASE_URL'), max: 4 })
const store = makePostgresEventStore({ pool, log }, { schema: env('PROJ_EVENT_SCHEMA') })
const projector = startProjector({ store, pool, log }, { schema: env('PROJ_SCHEMA'), projections: [ordersProjection], batchSize: Number(env('PROJ_BATCH')), retryDelayMs: 50 })
process.stdout.write('started\n')
const lines = createInterface({ input: process.stdin })
await new Promise<void>((resolve) => lines.once('line', () => resolve()))
lines.close()
await projector.stop()
await store.close()
await pool.end()
