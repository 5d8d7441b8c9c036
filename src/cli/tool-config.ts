import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import { StartupError, loadConfig, rootLogger } from '../main.ts'
import { UsageError } from './io.ts'

/** The configuration for a tool command: a bad setting is a usage error (exit 2) naming the variable. */
export const configOrUsage = async (): Promise<Config> => {
  try {
    return await loadConfig()
  } catch (e) {
    if (e instanceof StartupError) throw new UsageError(e.message)
    throw e
  }
}

/** The root logger of a tool whose output is its answer: `info` becomes `warn`, so logs do not mix with it. */
export const quietLogger = (config: Config): Logger => rootLogger({ ...config, SATANG_LOG_LEVEL: config.SATANG_LOG_LEVEL === 'info' ? 'warn' : config.SATANG_LOG_LEVEL })
