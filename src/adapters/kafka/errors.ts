import type { PublishFailure, PublishFailureKind } from '../../application/ports/event-publisher.ts'

/*
 * Kafka client errors (@platformatic/kafka), classified for the operator. The client wraps what went
 * wrong in layers: an aggregate per operation (`errors`), a network error per connection ("Connection
 * to host:port failed.", `cause`), and at the bottom the socket's, TLS's or broker's own error (a
 * protocol error carries the broker's error code name as `apiId`). We read the whole tree.
 */

type ErrorLike = {
  readonly name?: unknown
  readonly message?: unknown
  readonly code?: unknown
  readonly apiId?: unknown
  readonly serverErrorMessage?: unknown
  readonly canRetry?: unknown
  readonly cause?: unknown
  readonly errors?: unknown
}

const isErrorLike = (u: unknown): u is ErrorLike => typeof u === 'object' && u !== null

/** Every error of the tree (causes and aggregated errors), outermost first; at most 50. */
const treeOf = (err: unknown): ReadonlyArray<ErrorLike> => {
  const out: ErrorLike[] = []
  const queue: unknown[] = [err]
  while (queue.length > 0 && out.length < 50) {
    const e = queue.shift()
    if (!isErrorLike(e) || out.includes(e)) continue
    out.push(e)
    if (e.cause !== undefined) queue.push(e.cause)
    if (Array.isArray(e.errors)) queue.push(...(e.errors as unknown[]))
  }
  return out
}

/** Whether the broker answered with protocol error `id` (its code name, `apiId`) anywhere in the client's error tree. */
export const hasBrokerError = (err: unknown, id: string): boolean => treeOf(err).some((e) => e.apiId === id)

const TOPIC_ERRORS = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'TOPIC_AUTHORIZATION_FAILED', 'INVALID_TOPIC_EXCEPTION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_OR_FOLLOWER', 'INVALID_REPLICATION_FACTOR', 'INVALID_PARTITIONS', 'POLICY_VIOLATION'])
const TIMEOUT_ERRORS = new Set(['REQUEST_TIMED_OUT', 'NOT_ENOUGH_REPLICAS', 'NOT_ENOUGH_REPLICAS_AFTER_APPEND'])
const AUTHENTICATION_ERRORS = new Set(['SASL_AUTHENTICATION_FAILED', 'UNSUPPORTED_SASL_MECHANISM', 'ILLEGAL_SASL_STATE'])
/** Node's TLS verification failures (`code` of the socket error). */
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_|HOSTNAME_MISMATCH|ERR_OSSL_)/

const text = (u: unknown): string | undefined => (typeof u === 'string' && u !== '' ? u : undefined)

const kindOf = (tree: ReadonlyArray<ErrorLike>): PublishFailureKind => {
  const ids = tree.map((e) => text(e.apiId)).filter((id) => id !== undefined)
  if (tree.some((e) => e.code === 'PLT_KFK_AUTHENTICATION') || ids.some((id) => AUTHENTICATION_ERRORS.has(id))) return 'authentication'
  if (tree.some((e) => typeof e.code === 'string' && TLS_CODES.test(e.code))) return 'tls'
  if (ids.some((id) => TOPIC_ERRORS.has(id))) return 'topic'
  if (ids.some((id) => TIMEOUT_ERRORS.has(id))) return 'timeout'
  if (ids.length > 0) return 'rejected'
  if (tree.some((e) => e.code === 'PLT_KFK_TIMEOUT')) return 'timeout'
  return 'unreachable'
}

/** The brokers a connection error names ("Connection to host:port failed."), in order, once each. */
const brokersNamed = (tree: ReadonlyArray<ErrorLike>): ReadonlyArray<string> => {
  const out: string[] = []
  for (const e of tree) {
    const m = typeof e.message === 'string' ? /^Connection to (\S+:\d+) failed/.exec(e.message) : null
    if (m?.[1] !== undefined && !out.includes(m[1])) out.push(m[1])
  }
  return out
}

/** The innermost words: the broker's own message and error code, or the socket's / TLS's error. */
const detailOf = (tree: ReadonlyArray<ErrorLike>): string => {
  const leaves = tree.filter((e) => e.cause === undefined && !(Array.isArray(e.errors) && e.errors.length > 0))
  const words = (leaves.length > 0 ? leaves : tree.slice(-1)).map((e) => {
    const server = text(e.serverErrorMessage)
    const id = text(e.apiId) ?? (typeof e.code === 'string' && !e.code.startsWith('PLT_KFK_') ? e.code : undefined)
    const message = server ?? text(e.message) ?? text(e.name) ?? 'unknown error'
    return id === undefined ? message : `${message} (${id})`
  })
  return [...new Set(words)].join('; ')
}

/** What the publisher connects with, for the operator's error lines (never a secret). */
export type SecurityDescription = {
  /** `plaintext`, `ssl`, `sasl_plaintext` or `sasl_ssl`. */
  readonly protocol: string
  /** The SASL mechanism (`SCRAM-SHA-512`) and user, when SASL is on. */
  readonly sasl?: { readonly mechanism: string; readonly username: string }
}

const WHAT: Readonly<Record<PublishFailureKind, (s: SecurityDescription | undefined) => string>> = {
  unreachable: () => 'no broker answered',
  topic: () => 'the topic is missing or not usable',
  rejected: () => 'the broker refused the messages',
  timeout: () => 'the broker did not acknowledge in time (the messages may have been written; they are sent again)',
  authentication: (s) =>
    s?.sasl === undefined
      ? 'the broker refused the authentication (SASL is off here: set SATANG_KAFKA_SASL_MECHANISM if the listener requires it)'
      : `the broker refused the credentials: SASL ${s.sasl.mechanism}, user ${JSON.stringify(s.sasl.username)} (check SATANG_KAFKA_SASL_USERNAME, the password in SATANG_KAFKA_SASL_PASSWORD_FILE, and the mechanism the listener accepts)`,
  tls: () => "the TLS handshake failed: the broker's certificate is not trusted (check SATANG_KAFKA_SSL_CA_FILE) or does not name the broker's address",
}

/**
 * A client failure of `operation` as a `PublishFailure`: what kind, and one line naming the brokers,
 * the security in use and the broker's own words. `cause` is a plain summary of the client's errors
 * (messages and codes only), so that logging it can never carry a credential the client held.
 */
export const publishFailureOf = (operation: string, where: string, err: unknown, security?: SecurityDescription): PublishFailure => {
  const tree = treeOf(err)
  const kind = kindOf(tree)
  const named = brokersNamed(tree)
  const via = security === undefined || security.protocol === 'plaintext' ? '' : `, ${security.protocol.toUpperCase()}`
  const at = named.length > 0 ? `; broker ${named.join(', ')}` : ''
  const detail = tree.length === 0 ? String(err) : detailOf(tree)
  const retriable = kind === 'unreachable' || kind === 'timeout' || kind === 'authentication' || kind === 'tls' || tree.some((e) => e.canRetry === true)
  const cause = new Error(tree.length === 0 ? String(err) : tree.map((e) => `${text(e.name) ?? 'Error'}${typeof e.code === 'string' ? ` ${e.code}` : ''}: ${text(e.serverErrorMessage) ?? text(e.message) ?? ''}`).join(' <- '))
  return { _tag: 'PublishFailure', kind, message: `${operation} (${where}${via}${at}): ${WHAT[kind](security)}: ${detail}`, retriable, cause }
}
