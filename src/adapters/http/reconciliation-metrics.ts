import { Gauge, type Registry } from 'prom-client'
import { BREAK_CLASSES } from '../../domain/reconciliation/break-class.ts'
import { VERDICTS } from '../../domain/reconciliation/verdict.ts'
import type { Logger } from '../../logger.ts'
import { lastReconciledDay, openBreaksByClassAndAge, type AgeCell, type Rm } from '../../projections/reconciliation/console-reads.ts'

/**
 * Reconciliation on `/metrics` (`satang_reconciliation_*`), for an existing Prometheus/Grafana to alert
 * on: open breaks and the satang at stake per class, and the verdict of the latest reconciled day per
 * merchant (one series per verdict, 1 for the current one; and as a number: 0 reconciled,
 * 1 reconciled_with_pending, 2 breaks, 3 incomplete). Read from the read models at most once a second.
 */
export const registerReconciliationMetrics = (registry: Registry, rm: Rm, merchantId: string, log: Logger): void => {
  type Figures = { readonly cells: ReadonlyArray<AgeCell>; readonly last: Awaited<ReturnType<typeof lastReconciledDay>> }
  let cached: { at: number; value: Promise<Figures | undefined> } | undefined
  const figures = async (): Promise<Figures | undefined> => {
    const now = Date.now()
    if (cached === undefined || now - cached.at > 1000) {
      cached = {
        at: now,
        value: Promise.all([openBreaksByClassAndAge(rm, merchantId, new Date()), lastReconciledDay(rm, merchantId)]).then(
          ([cells, last]) => ({ cells, last }),
          (e: unknown) => {
            // A scrape must not fail because the read models are not there yet: the series are left out.
            log.warn({ err: e }, 'reconciliation figures unavailable for /metrics')
            return undefined
          },
        ),
      }
    }
    return cached.value
  }
  const perClass = (name: string, help: string, value: (cells: ReadonlyArray<AgeCell>) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['merchant_id', 'class'],
      registers: [registry],
      async collect() {
        const f = await figures()
        if (f === undefined) return
        for (const cls of BREAK_CLASSES) this.set({ merchant_id: merchantId, class: cls }, value(f.cells.filter((c) => c.class === cls)))
      },
    })
  }
  perClass('satang_reconciliation_open_breaks', 'reconciliation breaks open now (new or persisting), per class', (cells) => cells.reduce((n, c) => n + c.count, 0))
  perClass('satang_reconciliation_at_stake_satang', 'satang at stake in the open breaks, per class', (cells) => Number(cells.reduce((n, c) => n + c.atStake, 0n)))
  new Gauge({
    name: 'satang_reconciliation_last_verdict',
    help: 'the verdict of the latest reconciled Bangkok business day: 1 for its verdict, 0 for the others',
    labelNames: ['merchant_id', 'verdict'],
    registers: [registry],
    async collect() {
      const f = await figures()
      if (f?.last === undefined) return
      for (const v of VERDICTS) this.set({ merchant_id: merchantId, verdict: v }, f.last.verdict === v ? 1 : 0)
    },
  })
  new Gauge({
    name: 'satang_reconciliation_last_verdict_code',
    help: 'the verdict of the latest reconciled day as a number: 0 reconciled, 1 reconciled_with_pending, 2 breaks, 3 incomplete',
    labelNames: ['merchant_id'],
    registers: [registry],
    async collect() {
      const f = await figures()
      if (f?.last === undefined) return
      const code = VERDICTS.findIndex((v) => v === f.last?.verdict)
      if (code >= 0) this.set({ merchant_id: merchantId }, code)
    },
  })
  new Gauge({
    name: 'satang_reconciliation_last_day_timestamp_seconds',
    help: 'the start (00:00 Asia/Bangkok) of the latest reconciled business day, as Unix seconds',
    labelNames: ['merchant_id'],
    registers: [registry],
    async collect() {
      const f = await figures()
      if (f?.last === undefined) return
      this.set({ merchant_id: merchantId }, Date.parse(`${f.last.day}T00:00:00+07:00`) / 1000)
    },
  })
}
