import type { FastifyBaseLogger } from 'fastify'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
const LEVELS: ReadonlyArray<Level> = ['fatal', 'error', 'warn', 'info', 'debug', 'trace']

/**
 * fastify's `childLoggerFactory` for the request logger (`request.log`), made when the request first
 * logs instead of at every request. A pino child applies the redaction of satang's logger
 * (src/logger.ts) to its bindings when it is made: about 20 µs a request, while most requests log
 * nothing. What a request does log is the same line, with the same bindings (its request id), as
 * with the child made up front. A route with options of its own (a log level) gets its child at once.
 */
export const lazyRequestLogger = (logger: FastifyBaseLogger, bindings: Record<string, unknown>, options: object): FastifyBaseLogger => {
  if (Object.keys(options).length > 0) return logger.child(bindings, options)
  let made: FastifyBaseLogger | undefined
  const child = (): FastifyBaseLogger => (made ??= logger.child(bindings))
  const enabled = (level: Level): boolean => {
    const check = (logger as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled
    return check === undefined || check.call(logger, level)
  }
  const write =
    (level: Level) =>
    (...args: unknown[]): void => {
      if (made === undefined && !enabled(level)) return
      ;(child()[level] as (...a: unknown[]) => void)(...args)
    }
  const lazy = {
    child: (more: Record<string, unknown>, opts?: object) => child().child(more, opts),
    silent: (): void => undefined,
    get level(): string {
      return made?.level ?? logger.level
    },
    set level(l: string) {
      child().level = l
    },
  } as Record<string, unknown>
  for (const level of LEVELS) lazy[level] = write(level)
  return lazy as unknown as FastifyBaseLogger
}
