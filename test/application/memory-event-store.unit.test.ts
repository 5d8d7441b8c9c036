import { eventStoreContract } from '../adapters/eventstore/eventstore-contract.ts'
import { makeMemoryEventStore, makeMemoryLog, type MemoryEventStore } from './memory-event-store.ts'

// The store the application's unit tests run on shows the behaviour of the product's stores. Every
// store the suite opens shares one log, as the processes of a deployment share one database.
const log = makeMemoryLog()
const stores: MemoryEventStore[] = []

eventStoreContract(
  'in-memory (test double)',
  () => {
    const store = makeMemoryEventStore(() => new Date(), log)
    stores.push(store)
    return Promise.resolve({ store, close: () => store.close() })
  },
  {
    writeUndecodable: (stream) => {
      const store = stores[0]
      if (store === undefined) throw new Error('no store opened yet')
      store.writeUndecodable(stream)
      return Promise.resolve()
    },
  },
)
