import { Counter, type Registry } from 'prom-client'

/** One series of a scraped counter: its labels and the running total read now. */
export type CounterReading<L extends string> = { readonly labels: Partial<Record<L, string>>; readonly value: number }

/**
 * A Prometheus counter whose value is a running total kept elsewhere (a checkpoint row, a cache's
 * statistics), read at each scrape. It only goes up, except when what it counts starts again (a
 * projection rebuilt, a process restarted), which `rate()` and `increase()` take as a counter reset.
 * A reading that fails leaves the series out of that scrape.
 */
export const scrapedCounter = <L extends string>(
  registry: Registry,
  spec: { readonly name: string; readonly help: string; readonly labelNames?: ReadonlyArray<L> },
  read: () => ReadonlyArray<CounterReading<L>> | undefined | Promise<ReadonlyArray<CounterReading<L>> | undefined>,
): void => {
  if (!spec.name.endsWith('_total')) throw new Error(`counter ${spec.name}: a counter's name ends in _total`)
  new Counter<L>({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    async collect() {
      const readings = await read()
      this.reset()
      for (const r of readings ?? []) this.inc(r.labels, Math.max(0, r.value))
    },
  })
}
