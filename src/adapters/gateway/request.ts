import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import type { GatewayOperation } from '../../domain/gateway/operation.ts'
import type { Violation } from '../../domain/violations.ts'
import { decodeAll } from '../../domain/violations.ts'
import type { ValidationFailed, WireFields } from '../../application/ports/gateway.ts'
import type { HttpRequest } from './transport.ts'
import { SIGN_TYPE, signedRequestHeaders, type Signer } from '../../domain/gateway/signing.ts'

/** The only protocol version the gateway defines (spec, Versioning). */
export const PROTOCOL_VERSION = 'v1'

/** A request that passed its codec: the exact fields to sign and send. */
export type PreparedRequest = {
  readonly operation: string
  readonly method: 'GET' | 'POST'
  readonly service: string
  readonly fields: WireFields
}

const withDefaults = (fields: WireFields, service: string | undefined): WireFields => ({
  version: PROTOCOL_VERSION,
  ...(service === undefined ? {} : { service }),
  ...fields,
})

const invalid = (operation: string, violations: ReadonlyArray<Violation>): ValidationFailed => ({
  _tag: 'ValidationFailed',
  operation,
  violations,
  retriable: false,
})

const envelopeViolations = (fields: WireFields): ReadonlyArray<Violation> => {
  const out: Violation[] = []
  if (fields['version'] !== PROTOCOL_VERSION) out.push({ path: 'version', rule: `must be ${PROTOCOL_VERSION}` })
  const service = fields['service']
  if (typeof service !== 'string' || service === '') out.push({ path: 'service', rule: 'is required (the operation codec did not set it and no service was given)' })
  return out
}

// A GET carries its fields as query parameters, which are text: the spec has no nested objects there.
const asQueryFields = (fields: WireFields): E.Either<ReadonlyArray<Violation>, Readonly<Record<string, string>>> => {
  const out: Record<string, string> = {}
  const violations: Violation[] = []
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === null) continue
    if (typeof value === 'string') out[key] = value
    else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') out[key] = String(value)
    else violations.push({ path: key, rule: 'must be text: a GET request cannot carry objects or lists' })
  }
  return violations.length > 0 ? E.left(violations) : E.right(out)
}

// JSON drops `undefined` (and turns dates into text): what the gateway receives is the round trip, and
// that is what is signed and reported as sent.
const asJsonFields = (fields: WireFields): WireFields => {
  const parsed: unknown = JSON.parse(JSON.stringify(fields))
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : {}
}

/**
 * Encodes `request` with the operation's codec, adds `version` and `service` when the codec does not,
 * and validates the result with the same codec. Every violated rule is reported at once, and an
 * invalid request never leaves the process.
 */
export const prepareRequest = <Req, Res>(
  operation: GatewayOperation<Req, Res>,
  request: Req,
  service?: string,
): E.Either<ValidationFailed, PreparedRequest> =>
  pipe(
    decodeAll(operation.request, withDefaults(operation.request.encode(request), service)),
    E.map((valid) => withDefaults(operation.request.encode(valid), service)),
    E.flatMap((fields) => {
      const problems = envelopeViolations(fields)
      return problems.length > 0 ? E.left(problems) : E.right(fields)
    }),
    E.flatMap((fields): E.Either<ReadonlyArray<Violation>, WireFields> =>
      operation.httpMethod === 'GET' ? asQueryFields(fields) : E.right(asJsonFields(fields)),
    ),
    E.bimap(
      (violations) => invalid(operation.name, violations),
      (fields) => ({ operation: operation.name, method: operation.httpMethod, service: String(fields['service']), fields }),
    ),
  )

/**
 * The signed HTTP request: the `sign` header covers the JSON body (POST) or the query parameters (GET),
 * with `sign-type: RSA` and `content-type: application/json` (spec, Authentication).
 */
export const toHttpRequest = (endpoint: URL, prepared: PreparedRequest, signer: Signer | { readonly signature: string }): HttpRequest => {
  const signed = 'signature' in signer ? { 'content-type': 'application/json', 'sign-type': SIGN_TYPE, sign: signer.signature } : signedRequestHeaders(signer, prepared.fields)
  const headers = { ...signed, accept: 'application/json' }
  if (prepared.method === 'POST') return { method: 'POST', url: endpoint, headers, body: JSON.stringify(prepared.fields) }
  const url = new URL(endpoint)
  for (const [key, value] of Object.entries(prepared.fields)) url.searchParams.append(key, String(value))
  return { method: 'GET', url, headers }
}
