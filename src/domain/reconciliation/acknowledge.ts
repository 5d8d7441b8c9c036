import * as E from 'fp-ts/lib/Either.js'
import type { BreakClass } from './break-class.ts'
import { reconciliationBreakAcknowledged, type BreakEvent, type ReconciliationBreakAcknowledgedData } from './events/index.ts'
import type { BreakStatus } from './lifecycle.ts'

/** A break's own stream: whether a person acknowledged it. */
export type BreakState = { readonly acknowledged: ReconciliationBreakAcknowledgedData | null }

export const initialBreakState: BreakState = { acknowledged: null }

export const evolveBreakState = (s: BreakState, e: BreakEvent): BreakState => (s.acknowledged === null ? { acknowledged: e.data } : s)

/** A person closes a break with a reason. `current` is the break as the read model shows it (the command carries it: the break's history lives in run streams). */
export type AcknowledgeBreak = {
  readonly type: 'AcknowledgeBreak'
  readonly breakId: string
  readonly current: { readonly class: BreakClass; readonly status: BreakStatus } | null
  readonly actor: string
  readonly reason: string
  readonly at: Date
}

export type AcknowledgeRejection =
  | { readonly _tag: 'NoSuchBreak'; readonly breakId: string }
  | { readonly _tag: 'BreakResolved'; readonly breakId: string }
  | { readonly _tag: 'ReasonRequired' }

/** Acknowledging twice records it once (the first reason stands); a resolved break cannot be acknowledged. */
export const decideAcknowledge = (c: AcknowledgeBreak, s: BreakState): E.Either<AcknowledgeRejection, ReadonlyArray<BreakEvent>> => {
  if (c.reason.trim() === '') return E.left({ _tag: 'ReasonRequired' })
  if (c.current === null) return E.left({ _tag: 'NoSuchBreak', breakId: c.breakId })
  if (s.acknowledged !== null) return E.right([])
  if (c.current.status === 'resolved') return E.left({ _tag: 'BreakResolved', breakId: c.breakId })
  return E.right([reconciliationBreakAcknowledged.make({ breakId: c.breakId, class: c.current.class, actor: c.actor, reason: c.reason.trim(), acknowledgedAt: c.at })])
}
