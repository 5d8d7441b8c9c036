import * as E from 'fp-ts/lib/Either.js'
import type { EventStore } from '../application/ports/event-store.ts'
import { bangkokDateOf, formatCalendarDate } from '../domain/bangkok-time.ts'

/*
 * The days `satang reconcile` accepts: none after tomorrow (Asia/Bangkok; nothing can have happened on
 * a later day yet), none before the installation's first event (satang recorded nothing earlier). A
 * run outside that window would record a verdict, `reconciled`, about a day nothing is known of.
 */

const DAY_MS = 86_400_000

const bangkokDay = (at: Date): string => formatCalendarDate(bangkokDateOf(at))

/** The first day of the window and why it is that day. */
export type Earliest = { readonly day: string; readonly why: string }

/**
 * The last day that can be reconciled: tomorrow in Asia/Bangkok, on the run's clock (the later of now
 * and `--as-of`, which exists for a sandbox whose clock runs ahead).
 */
export const latestReconcilableDay = (now: Date, asOf?: Date): string => bangkokDay(new Date(Math.max(now.getTime(), asOf?.getTime() ?? 0) + DAY_MS))

/**
 * The first day that can be reconciled: the Bangkok day of the first event in the log. Yesterday, the
 * default run's day, is always in the window, so that a scheduled `satang reconcile` on an installation
 * younger than a day, or with an empty log, reconciles an empty day instead of failing.
 */
export const earliestReconcilableDay = (now: Date, firstEventAt: Date | null): Earliest => {
  const yesterday = bangkokDay(new Date(now.getTime() - DAY_MS))
  if (firstEventAt === null) return { day: yesterday, why: 'yesterday in Asia/Bangkok: the event log is empty, so nothing earlier was recorded' }
  const first = bangkokDay(firstEventAt)
  return first < yesterday ? { day: first, why: 'the Asia/Bangkok day of the first event in the event log: satang recorded nothing earlier' } : { day: yesterday, why: 'yesterday in Asia/Bangkok: the first event in the event log is later' }
}

/** What the scope options were (`--date D`, or `--from D --to D`). */
export type ScopeOptions = { readonly date?: string; readonly from?: string; readonly to?: string }

const refusal = (option: string, day: string, rule: string): string => `${option} ${day}: ${rule}`

/** Why a scope's days fall after the window (checked before anything is opened), or undefined. */
export const afterWindow = (opts: ScopeOptions, scope: { readonly from: string; readonly to: string }, latest: string): string | undefined =>
  scope.to > latest ? refusal(opts.date !== undefined ? '--date' : '--to', scope.to, `must not be after ${latest} (tomorrow in Asia/Bangkok): nothing can have happened on a later day yet`) : undefined

/** Why a scope's days fall before the window, or undefined. */
export const beforeWindow = (opts: ScopeOptions, scope: { readonly from: string; readonly to: string }, earliest: Earliest): string | undefined =>
  scope.from < earliest.day ? refusal(opts.date !== undefined ? '--date' : '--from', scope.from, `must not be before ${earliest.day} (${earliest.why})`) : undefined

/**
 * When the first event of the log was recorded (null: the log is empty). Undecodable events at the
 * head of the log are passed over: the first one that decodes stands for the installation's start.
 */
export const firstEventAt = async (store: EventStore): Promise<E.Either<string, Date | null>> => {
  const page = await store.readAll({ maxCount: 100 })()
  if (E.isLeft(page)) return E.left(`the event log could not be read (${page.left._tag})`)
  for (const item of page.right) if (E.isRight(item)) return E.right(item.right.recordedAt)
  return E.right(null)
}
