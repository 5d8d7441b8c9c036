import { freshDatabase } from '../adapters/http/database.ts'

/**
 * The database of a topology run: a fresh PostgreSQL database, and the URL each process connects
 * with. Every process of the stack takes its URL from `urlFor`, so a stack whose roles connect as
 * roles of their own (least privilege: a migrate owner, an api writer, read-model writers) changes
 * this one helper and nothing else.
 */
export type TopologyDatabase = {
  /** The owner's URL: the test's own checks and the restore drill use it. */
  readonly adminUrl: string
  readonly urlFor: (who: TopologyClient) => string
  readonly drop: () => Promise<void>
}

/** Who connects: a process role, `satang migrate`, or a tool (`satang project`, `reconcile`, `audit`). */
export type TopologyClient = 'migrate' | 'api' | 'projector' | 'relay' | 'scheduler' | 'tool'

export const topologyDatabase = async (label: string): Promise<TopologyDatabase> => {
  const db = await freshDatabase(label)
  return { adminUrl: db.url, urlFor: () => db.url, drop: db.drop }
}
