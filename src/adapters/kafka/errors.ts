import type { PublishFailure, PublishFailureKind } from '../../application/ports/event-publisher.ts'

/*
 * kafkajs errors, classified for the operator. kafkajs wraps the last error of its retries in
 * `KafkaJSNumberOfRetriesExceeded` (`cause`); what went wrong is the innermost error: a connection
 * error, a timeout, or a protocol error whose `type` is the broker's error code name.
 */

type ErrorLike = { readonly name?: unknown; readonly message?: unknown; readonly type?: unknown; readonly retriable?: unknown; readonly cause?: unknown; readonly originalError?: unknown }

const isErrorLike = (u: unknown): u is ErrorLike => typeof u === 'object' && u !== null

/** The chain of causes, outermost first (at most 10 deep). */
const chainOf = (err: unknown): ReadonlyArray<ErrorLike> => {
  const chain: ErrorLike[] = []
  let current: unknown = err
  while (isErrorLike(current) && chain.length < 10) {
    chain.push(current)
    current = current.cause ?? current.originalError
  }
  return chain
}

const TOPIC_ERRORS = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'TOPIC_AUTHORIZATION_FAILED', 'INVALID_TOPIC_EXCEPTION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION', 'INVALID_REPLICATION_FACTOR', 'INVALID_PARTITIONS', 'POLICY_VIOLATION'])
const TIMEOUT_ERRORS = new Set(['REQUEST_TIMED_OUT', 'NOT_ENOUGH_REPLICAS', 'NOT_ENOUGH_REPLICAS_AFTER_APPEND'])
const UNREACHABLE_NAMES = new Set(['KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSBrokerNotFound'])
const TIMEOUT_NAMES = new Set(['KafkaJSRequestTimeoutError', 'KafkaJSTimeout'])

const kindOf = (chain: ReadonlyArray<ErrorLike>): PublishFailureKind => {
  for (const e of [...chain].reverse()) {
    if (typeof e.type === 'string' && TOPIC_ERRORS.has(e.type)) return 'topic'
    if (typeof e.type === 'string' && TIMEOUT_ERRORS.has(e.type)) return 'timeout'
    if (typeof e.type === 'string') return 'rejected'
    if (typeof e.name === 'string' && UNREACHABLE_NAMES.has(e.name)) return 'unreachable'
    if (typeof e.name === 'string' && TIMEOUT_NAMES.has(e.name)) return 'timeout'
    if (typeof e.message === 'string' && /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ECONNRESET|EAI_AGAIN|ETIMEDOUT/.test(e.message)) return 'unreachable'
  }
  return 'unreachable'
}

const WHAT: Readonly<Record<PublishFailureKind, string>> = {
  unreachable: 'no broker answered',
  topic: 'the topic is missing or not usable',
  rejected: 'the broker refused the messages',
  timeout: 'the broker did not acknowledge in time (the messages may have been written; they are sent again)',
}

/** A kafkajs failure of `operation` as a `PublishFailure`: what kind, and one line naming the brokers and the broker's own words. */
export const publishFailureOf = (operation: string, where: string, err: unknown): PublishFailure => {
  const chain = chainOf(err)
  const innermost = chain.at(-1)
  const kind = kindOf(chain)
  const detail = innermost === undefined ? String(err) : `${typeof innermost.message === 'string' ? innermost.message : String(innermost.name)}${typeof innermost.type === 'string' ? ` (${innermost.type})` : ''}`
  const retriable = chain.some((e) => e.retriable === true) || kind === 'unreachable' || kind === 'timeout'
  return { _tag: 'PublishFailure', kind, message: `${operation} (${where}): ${WHAT[kind]}: ${detail}`, retriable, cause: err }
}
