import { pino, type Logger, type LoggerOptions } from 'pino'

export type { Logger }

/**
 * Keys whose values never reach a log line: keys and signatures, tokens, and payer personal data
 * (PDPA). Ids stay visible; names, phones, emails, id numbers and addresses do not.
 */
export const REDACTED_PATHS: ReadonlyArray<string> = [
  'sign',
  '*.sign',
  'headers.sign',
  'headers.authorization',
  '*.headers.authorization',
  'privateKey',
  '*.privateKey',
  'private_key',
  '*.private_key',
  'token',
  '*.token',
  'password',
  '*.password',
  'databaseUrl',
  '*.databaseUrl',
  '*.customer.full_name',
  '*.customer.first_name',
  '*.customer.last_name',
  '*.customer.phone',
  '*.customer.email',
  '*.customer.id_no',
  '*.customer.address',
  'customer.full_name',
  'customer.first_name',
  'customer.last_name',
  'customer.phone',
  'customer.email',
  'customer.id_no',
  'customer.address',
  '*.mobile_number',
  'mobile_number',
  '*.buyer_identity_code',
  'buyer_identity_code',
  '*.auth_code',
  'auth_code',
]

export type LogConfig = { readonly level: string; readonly pretty?: boolean }

/** The one root logger. Adapters, jobs and projections take `log.child({ component })`. */
export const makeLogger = (config: LogConfig, destination?: NodeJS.WritableStream): Logger => {
  const options: LoggerOptions = {
    level: config.level,
    redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
    base: { service: 'satang' },
    timestamp: pino.stdTimeFunctions.isoTime,
  }
  return destination === undefined ? pino(options, pino.destination(2)) : pino(options, destination)
}

/** A logger that drops everything, for tests and for commands whose output is data. */
export const silentLogger = (): Logger => pino({ level: 'silent' })
