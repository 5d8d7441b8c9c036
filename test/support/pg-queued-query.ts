/**
 * pg 8's warning for a query sent to a client that is running one (pg 9 will refuse it). satang must
 * never do that (src/platform/postgres/one-at-a-time.ts): the helpers that run satang fail the test whose
 * satang printed it, and tests of in-process code hear this process's warnings for it.
 */
const QUEUED_QUERY = /^.*already executing a query.*$/m

/** The warning's line in `text` (a process's stderr, a warning's message), or undefined. */
export const pgQueuedQuery = (text: string): string | undefined => QUEUED_QUERY.exec(text)?.[0]

/** Hears this process's warnings from now on: `heard()` gives pg's queued-query warnings among them; `stop()` stops hearing. */
export const hearPgQueuedQueries = (): { readonly heard: () => ReadonlyArray<string>; readonly stop: () => void } => {
  const queued: string[] = []
  const listen = (w: Error): void => {
    const line = pgQueuedQuery(w.message)
    if (line !== undefined) queued.push(line)
  }
  process.on('warning', listen)
  return { heard: () => queued, stop: () => void process.off('warning', listen) }
}
