import { randomUUID } from 'node:crypto'
import { binaryEvent, EventStoreDBClient } from '@eventstore/db-client'
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers'
import { afterAll, beforeAll } from 'vitest'
import { makeEsdbEventStore } from '../../../src/adapters/eventstore/esdb.ts'
import { silentLogger } from '../../../src/logger.ts'
import { eventStoreContract } from './eventstore-contract.ts'
import { dockerProblem } from '../../support/docker.ts'

// EventStoreDB from EVENTSTOREDB_URL, else a container when a Docker engine is reachable, else skipped.
const IMAGE = 'eventstore/eventstore:24.10'
const configured = process.env.EVENTSTOREDB_URL

const problem = configured === undefined ? await dockerProblem() : undefined
const skipReason = problem === undefined ? undefined : `EVENTSTOREDB_URL is not set and no Docker engine is reachable (${problem})`
if (skipReason !== undefined) console.info(`EventStoreDB contract suite skipped: ${skipReason}`)

let container: StartedTestContainer | undefined
let url = configured ?? ''

beforeAll(async () => {
  if (skipReason !== undefined || configured !== undefined) return
  container = await new GenericContainer(IMAGE)
    .withEnvironment({ EVENTSTORE_INSECURE: 'true', EVENTSTORE_MEM_DB: 'true', EVENTSTORE_RUN_PROJECTIONS: 'None' })
    .withExposedPorts(2113)
    .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
    .start()
  url = `esdb://${container.getHost()}:${String(container.getMappedPort(2113))}?tls=false`
})
afterAll(async () => {
  await container?.stop()
})

const log = silentLogger()

eventStoreContract(
  'EventStoreDB',
  () => {
    const store = makeEsdbEventStore({ log }, { connectionString: url })
    return Promise.resolve({ store, close: () => store.close() })
  },
  {
    ...(skipReason === undefined ? {} : { skipReason }),
    // Plants a binary (non-JSON) event, which the adapter must report as undecodable.
    writeUndecodable: async (stream) => {
      const client = EventStoreDBClient.connectionString(url)
      try {
        await client.appendToStream(stream, binaryEvent({ id: randomUUID(), type: 'Broken', data: Uint8Array.from([0xff, 0xfe, 0x00]) }))
      } finally {
        await client.dispose()
      }
    },
  },
)
