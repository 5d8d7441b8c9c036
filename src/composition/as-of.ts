import * as E from 'fp-ts/lib/Either.js'
import { parseAsOf, streamOfKind, viewAsOf, type AsOf, type StreamKind } from '../application/as-of.ts'
import type { EventStore } from '../application/ports/event-store.ts'
import type { UseCaseResult } from '../application/results.ts'
import type { BalanceRow, BalanceScope } from '../domain/ledger/report.ts'
import { AsOfRefused, resolveAsOf } from '../projections/as-of.ts'
import { readTrialBalanceAsOf } from '../projections/ledger/as-of.ts'
import type { ReadModels } from '../projections/types.ts'

/** The "as of" reads of the merchant API (`?as_of=`): resolving the text, an item's view, the trial balance. */
export const asOfReads = (store: EventStore, readModels: ReadModels, merchantId: string, now: () => Date) => {
  const deps = { store, pool: readModels.pool }
  const resolve = async (text: string): Promise<E.Either<string, AsOf>> => {
    const parsed = parseAsOf(text)
    if (E.isLeft(parsed)) return parsed
    try {
      return E.right(await resolveAsOf(deps, readModels.schema, parsed.right, now()))
    } catch (e) {
      if (e instanceof AsOfRefused) return E.left(e.message)
      throw e
    }
  }
  return {
    resolve,
    view: (kind: StreamKind, id: string, asOf: AsOf): Promise<UseCaseResult> => viewAsOf(store, kind, streamOfKind(kind, merchantId, id), asOf),
    trialBalance: (scope: BalanceScope, position: AsOf['position']): Promise<ReadonlyArray<BalanceRow>> => readTrialBalanceAsOf(deps, readModels.schema, scope, position),
  }
}
