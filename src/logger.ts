import { pino, type Logger, type LoggerOptions } from 'pino'

export type { Logger }

// Redaction matches by path; values can sit at any of these depths (`request.customer`,
// `err.request.customer`, `event.data.request.customer`).
const DEPTHS = ['', '*.', '*.*.', '*.*.*.']
const SECRET_KEYS = ['sign', 'privateKey', 'private_key', 'token', 'password', 'databaseUrl', 'authorization']
const PAYER_KEYS = ['mobile_number', 'buyer_identity_code', 'auth_code', 'openid', 'remote_ip']
const CUSTOMER_KEYS = ['full_name', 'first_name', 'last_name', 'phone', 'email', 'id_no', 'address', 'company']

/**
 * Paths whose values never reach a log line: keys and signatures, tokens, and payer personal data
 * (PDPA). Ids stay visible; names, phones, emails, id numbers and addresses do not.
 */
export const REDACTED_PATHS: ReadonlyArray<string> = DEPTHS.flatMap((d) => [
  ...SECRET_KEYS.map((k) => `${d}${k}`),
  ...PAYER_KEYS.map((k) => `${d}${k}`),
  ...CUSTOMER_KEYS.map((k) => `${d}customer.${k}`),
])

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
