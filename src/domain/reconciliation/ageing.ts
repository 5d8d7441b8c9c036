/** Ageing buckets of open breaks, by whole days since first seen. */
export const AGE_BUCKETS = ['0-1', '2-7', '8-30', '>30'] as const
export type AgeBucket = (typeof AGE_BUCKETS)[number]

const DAY_MS = 86_400_000

/** Whole days from `firstSeen` to `asOf` (0 on the first day). */
export const ageDays = (firstSeen: Date, asOf: Date): number => Math.max(0, Math.floor((asOf.getTime() - firstSeen.getTime()) / DAY_MS))

export const ageBucketOf = (days: number): AgeBucket => (days <= 1 ? '0-1' : days <= 7 ? '2-7' : days <= 30 ? '8-30' : '>30')
