import { readTextBounded, readFailureText, READ_LIMITS } from '../adapters/os/bounded-read.ts'
import { isAbsolute, join, resolve } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { decodeConfig, formatConfigErrors, type Config } from '../config.ts'
import { makeLogger, type Logger } from '../logger.ts'
import { withSecretFiles } from './secret-files.ts'

/** Start-up could not proceed; the message is for the operator and never carries a secret. */
export class StartupError extends Error {
  override readonly name = 'StartupError'
}

/**
 * A start-up stopped by what it needs failing, not by its configuration: the database unreachable, a
 * migration, a port or the data directory in use, the embedded PostgreSQL. Exit 3 for `satang up` and
 * `satang migrate` alike; every other StartupError is the configuration's (exit 2).
 */
export class StartupFailure extends StartupError {}

/**
 * Another satang owns the data directory (holds its lock): this one refuses to start rather than share
 * its embedded PostgreSQL, sandbox state and keys. Exit 3.
 */
export class DataDirInUse extends StartupFailure {}

/** A start-up stopped by the configuration itself (a setting, or a combination a role cannot run with): exit 2, as for any bad setting. */
export class ConfigurationError extends StartupError {}

/** Reads `SATANG_CONFIG` (if set) and the environment, decodes them and reads the secrets of `*_FILE` settings; stops with every problem named. */
export const loadConfig = async (env: NodeJS.ProcessEnv = process.env): Promise<Config> => {
  const path = env['SATANG_CONFIG']
  let file: Record<string, unknown> = {}
  if (path !== undefined && path !== '') {
    let text: string
    try {
      text = await readTextBounded(path, READ_LIMITS.config)
    } catch (e) {
      throw new StartupError(`SATANG_CONFIG: cannot read ${JSON.stringify(path)} (${readFailureText(e)})`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new StartupError(`SATANG_CONFIG: ${JSON.stringify(path)} is not valid JSON`)
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new StartupError(`SATANG_CONFIG: ${JSON.stringify(path)} must hold a JSON object of settings`)
    file = { ...parsed }
  }
  const decoded = decodeConfig(env, file)
  if (E.isLeft(decoded)) throw new StartupError(formatConfigErrors(decoded.left))
  const withSecrets = await withSecretFiles(decoded.right)
  if (E.isLeft(withSecrets)) throw new StartupError(withSecrets.left)
  return withSecrets.right
}

export const rootLogger = (config: Config): Logger => makeLogger({ level: config.SATANG_LOG_LEVEL })

/** A path inside `SATANG_DATA_DIR` (relative to the working directory unless absolute). */
export const dataPath = (config: Config, ...parts: string[]): string => {
  const base = isAbsolute(config.SATANG_DATA_DIR) ? config.SATANG_DATA_DIR : resolve(process.cwd(), config.SATANG_DATA_DIR)
  return join(base, ...parts)
}
