import type { ClientBase, QueryConfig, QueryResult, QueryResultRow } from 'pg'

/**
 * A client's `query`, for callers that may send several queries at once (`Promise.all` of reads, many
 * requests sharing one lock session): a PostgreSQL connection runs one query at a time, and pg 8 queues
 * a query sent while another runs but warns that pg 9 will refuse it. Each query here waits for the one
 * before, whatever became of it (after an error inside a transaction, the next fails as PostgreSQL
 * fails it).
 */
export type SerialQuery = <R extends QueryResultRow = QueryResultRow>(text: string | QueryConfig, values?: ReadonlyArray<unknown>) => Promise<QueryResult<R>>

export const oneAtATime = (client: Pick<ClientBase, 'query'>): SerialQuery => {
  let previous: Promise<unknown> = Promise.resolve()
  return <R extends QueryResultRow>(text: string | QueryConfig, values?: ReadonlyArray<unknown>): Promise<QueryResult<R>> => {
    const run = previous.then(() => client.query<R>(text, values === undefined ? undefined : [...values]))
    previous = run.catch(() => undefined)
    return run
  }
}
