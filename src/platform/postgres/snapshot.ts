import type { Pool, PoolClient } from 'pg'

/**
 * Runs `work` in one read-only repeatable-read transaction on a connection of `pool`: everything it
 * reads is one consistent snapshot, and it takes no transaction id (so it holds back no subscriber of
 * the event log). The transaction is rolled back afterwards; when anything fails the connection's
 * state is unknown, and the pool drops it rather than reuse it.
 */
export const inReadOnlySnapshot = async <T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> => {
  const client = await pool.connect()
  try {
    await client.query('begin transaction isolation level repeatable read, read only')
    const result = await work(client)
    await client.query('rollback')
    client.release()
    return result
  } catch (e) {
    client.release(e instanceof Error ? e : new Error(String(e)))
    throw e
  }
}
