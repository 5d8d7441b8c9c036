import type * as t from 'io-ts'
import { oneOf } from '../gateway/text-codecs.ts'

/**
 * The verdict on a day (or a run), most serious first:
 * - `incomplete`: some item could not be checked (a net of zero proves nothing);
 * - `breaks`: some break is open (new or persisting);
 * - `reconciled_with_pending`: every item checked, none broken, some still legitimately pending;
 * - `reconciled`: every item checked and consistent.
 * Breaks a person acknowledged are closed: they do not make a day `breaks`.
 */
export const VERDICTS = ['reconciled', 'reconciled_with_pending', 'breaks', 'incomplete'] as const
export const Verdict = oneOf('Verdict', VERDICTS)
export type Verdict = t.TypeOf<typeof Verdict>

export const verdictOf = (c: { readonly unchecked: number; readonly breaks: number; readonly pending: number }): Verdict =>
  c.unchecked > 0 ? 'incomplete' : c.breaks > 0 ? 'breaks' : c.pending > 0 ? 'reconciled_with_pending' : 'reconciled'
