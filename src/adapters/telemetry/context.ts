import { AsyncLocalStorage } from 'node:async_hooks'
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api'

/**
 * The OpenTelemetry context of the code running now, kept in an AsyncLocalStorage, like the official
 * AsyncLocalStorageContextManager, with one addition: `enter`, which makes a context current for the
 * rest of the running code and what it starts. An HTTP request's span becomes current that way from a
 * fastify hook, so the handler, the use case, the gateway call and the append all run inside it.
 */
export class EnterableContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>()

  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.#storage.run(context, () => fn.apply(thisArg, args))
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target
    const fn = target as unknown as (...args: unknown[]) => unknown
    const storage = this.#storage
    return function (this: unknown, ...args: unknown[]) {
      return storage.run(context, () => fn.apply(this, args))
    } as unknown as T
  }

  /** Makes `context` current from here on, in this execution and the asynchronous work it starts. */
  enter(context: Context): void {
    this.#storage.enterWith(context)
  }

  enable(): this {
    return this
  }

  disable(): this {
    this.#storage.disable()
    return this
  }
}
