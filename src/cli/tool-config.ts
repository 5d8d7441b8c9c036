import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import { StartupError, loadConfig, rootLogger } from '../composition/startup.ts'
import { migrate, openDatabaseForTool, type Database } from '../composition/database.ts'
import { EXIT, UsageError } from './io.ts'

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

/** The database of a tool command (`openDatabaseForTool`), not migrated. When it cannot be opened it prints why, sets exit code 3 and returns undefined. */
export const openToolDatabase = async (config: Config, log: Logger, setExitCode: (code: number) => void): Promise<Database | undefined> => {
  try {
    return await openDatabaseForTool(config, log)
  } catch (e) {
    if (!(e instanceof StartupError)) throw e
    process.stderr.write(`satang: ${e.message}\n`)
    setExitCode(EXIT.failure)
    return undefined
  }
}

/**
 * The database of a tool command (`openDatabaseForTool`), migrated. When that fails it prints why, sets
 * exit code 3 and returns undefined.
 */
export const openMigratedDatabase = async (config: Config, log: Logger, setExitCode: (code: number) => void): Promise<Database | undefined> => {
  let db: Database | undefined
  try {
    db = await openDatabaseForTool(config, log)
    await migrate(db, log, config)
    return db
  } catch (e) {
    if (!(e instanceof StartupError)) throw e
    process.stderr.write(`satang: ${e.message}\n`)
    setExitCode(EXIT.failure)
    await db?.close()
    return undefined
  }
}
