export const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN

export const round = (n: number, digits = 0): number => Number(n.toFixed(digits))

export const fmt = (n: number): string => n.toLocaleString('en-US')

/** Satang ÷ baseline for rates (higher is better), rounded. */
export const rateRatio = (satang: number, bare: number): number => round(satang / bare, 2)

/**
 * Baseline ÷ satang for latencies (higher is better: 1 = as fast as bare), rounded. Latencies between
 * processes are not resolved below 0.1 ms (a bare NOTIFY can arrive before its writer hears the commit).
 */
export const latencyRatio = (satang: number, bare: number): number => round(Math.max(bare, 0.1) / Math.max(satang, 0.1), 2)

/** 100k, 1M, 1.25M: the size of a log in a figure's name. */
export const compact = (n: number): string => (n >= 1e6 ? `${String(round(n / 1e6, 2))}M` : n >= 1e3 ? `${String(round(n / 1e3, 1))}k` : String(n))
