import { DatabaseError } from 'pg'

// SQLSTATE classes worth retrying: connection exceptions (08), insufficient resources (53),
// operator intervention such as admin shutdown (57P), and transaction rollbacks (40: serialization
// failure, deadlock). Everything else (syntax, undefined table, permissions…) stays failed.
const RETRIABLE_SQLSTATE = /^(08|53|57P|40)/
const RETRIABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND'])
const RETRIABLE_MESSAGES = [/Connection terminated/i, /timeout exceeded when trying to connect/i, /Client has encountered a connection error/i, /server closed the connection/i]

const codeOf = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined

/** Whether a failed PostgreSQL call may succeed if repeated later. */
export const isRetriablePgError = (err: unknown): boolean => {
  const code = codeOf(err)
  if (err instanceof DatabaseError) return code !== undefined && RETRIABLE_SQLSTATE.test(code)
  if (code !== undefined && RETRIABLE_NODE_CODES.has(code)) return true
  const message = err instanceof Error ? err.message : String(err)
  return RETRIABLE_MESSAGES.some((re) => re.test(message))
}

/** The SQLSTATE of a database error, if it is one. */
export const sqlStateOf = (err: unknown): string | undefined => (err instanceof DatabaseError ? err.code : undefined)

/** The constraint a database error names, if any. */
export const constraintOf = (err: unknown): string | undefined => (err instanceof DatabaseError ? err.constraint : undefined)
