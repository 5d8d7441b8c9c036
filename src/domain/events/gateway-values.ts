import * as E from 'fp-ts/lib/Either.js'
import { parseBangkokDateTime } from '../bangkok-time.ts'
import { parseAmount, type Satang } from '../money.ts'

/*
 * Reading values out of decoded gateway messages. The codecs have checked them, so these never fail
 * on a decoded message; they still return `null` instead of throwing, so decide stays total.
 */

/** The satang of a wire amount (`"100"`, `"100.00"`), or null when it is not one. */
export const satangOf = (text: string): Satang | null => {
  const parsed = parseAmount(text)
  return E.isRight(parsed) ? parsed.right : null
}

/** An optional field the gateway may send as absent, null or `""`: its text, or null. */
export const presentText = (v: string | null | undefined): string | null => (v === undefined || v === null || v === '' ? null : v)

/** The instant of a gateway timestamp (Bangkok wall time), or null when absent or not one. */
export const gatewayInstantOf = (text: string | null | undefined): Date | null => {
  const present = presentText(text)
  if (present === null) return null
  const parsed = parseBangkokDateTime(present)
  return E.isRight(parsed) ? parsed.right : null
}
