import type { ReadItem } from '../../application/ports/event-store.ts'
import { approximateBytes } from '../../application/approximate-size.ts'

/** Events of one page a subscriber may hold decoded, in bytes (issue 31): 8 MiB, about 5,000 events of the usual size. */
export const DEFAULT_PAGE_BYTES = 8 * 1024 * 1024

/** Rows of a page whose size is measured (evenly spread): enough for an average, cheap beside decoding them. */
const SAMPLE = 16

/**
 * The size of a subscriber's next page: at most `maxEvents`, and as many events as fit in `budgetBytes`
 * at the average size of the last page's events (`approximateBytes` of a sample of them; at least one).
 * A page of events much larger than usual is followed by shorter pages, so a reader holds about the
 * budget whatever its events weigh.
 */
export const makePageSizer = (maxEvents: number, budgetBytes: number): { readonly limit: () => number; readonly observe: (items: ReadonlyArray<ReadItem>) => void } => {
  let limit = maxEvents
  return {
    limit: () => limit,
    observe: (items) => {
      if (items.length === 0) return
      const step = Math.max(1, Math.floor(items.length / SAMPLE))
      let bytes = 0
      let sampled = 0
      for (let i = 0; i < items.length; i += step) {
        bytes += approximateBytes(items[i])
        sampled += 1
      }
      limit = Math.max(1, Math.min(maxEvents, Math.floor(budgetBytes / Math.max(1, bytes / sampled))))
    },
  }
}
