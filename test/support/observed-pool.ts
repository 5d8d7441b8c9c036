import type { Pool, PoolClient } from 'pg'

/**
 * The pool, with `seen` called for every statement a store sends through it: through `pool.query`,
 * and through the `query` of a connection taken with `pool.connect` (the event store does both).
 */
export const observedPool = (pool: Pool, seen: (config: unknown) => void): Pool => {
  const observed = <T extends object>(target: T): T =>
    new Proxy(target, {
      get: (t, key, receiver) => {
        const v = Reflect.get(t, key, receiver) as unknown
        if (key !== 'query' || typeof v !== 'function') return v
        return (...args: unknown[]) => {
          seen(args[0])
          return (v as (...a: unknown[]) => unknown).apply(t, args)
        }
      },
    })
  const connect = pool.connect.bind(pool) as () => Promise<PoolClient>
  return new Proxy(observed(pool), {
    get: (t, key, receiver) => (key === 'connect' ? async () => observed(await connect()) : (Reflect.get(t, key, receiver) as unknown)),
  })
}
