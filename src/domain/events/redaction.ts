import * as t from 'io-ts'
import type { Json, JsonObject } from './envelope.ts'
import { sortedJson } from '../gateway/canonical.ts'
import { isJsonObject, JsonObjectCodec, toJsonObject } from './json.ts'

/*
 * PDPA: the event log is immutable and can never be erased, so payer personal data never enters it.
 * Every raw payload an event keeps (what satang sent, what the gateway answered or called back with)
 * goes through `redactPayerData`; the `RedactedPayload` type can be produced by nothing else, and its
 * codec refuses a stored payload with a payer field in clear.
 */

/** Replaces a payer value. `digest` (optional) is a keyed digest chosen by the application, e.g. HMAC-SHA-256 under a key kept outside the log. */
export type RedactionMarker = { readonly redacted: true; readonly digest?: string }

/** Payer fields, wherever they occur in a payload: Customer fields, the payer's wallet and bank identifiers, the payer's IP address, card data. */
export const PAYER_FIELDS: ReadonlySet<string> = new Set([
  'full_name',
  'first_name',
  'last_name',
  'phone',
  'email',
  'id_no',
  'address',
  'company',
  'gender',
  'mobile_number',
  'buyer_identity_code',
  'auth_code',
  'openid',
  'user_id',
  'remote_ip',
  'card',
])

/**
 * `customer` is payer info by definition: inside it only these fields stay in clear (the merchant's own
 * pseudonymous id of the payer and two categories); every other field, known or not, is redacted.
 */
export const CUSTOMER_FIELDS_IN_CLEAR: ReadonlySet<string> = new Set(['merchant_user_id', 'customer_type', 'id_type'])

export type RedactionOptions = {
  /** A keyed digest of the value's text (objects as canonical JSON); when absent the marker carries no digest. */
  readonly digest?: (value: string) => string
}

export interface RedactedPayloadBrand {
  readonly RedactedPayload: unique symbol
}
/** A JSON object in which no payer field holds a value in clear. */
export type RedactedPayload = t.Branded<JsonObject, RedactedPayloadBrand>

// Payloads are JSON already (checked once, at the top): objects are told apart by shape alone, so a
// walk over a payload stays linear in its size.
const isObjectNode = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

const isMarker = (u: Json | undefined): boolean =>
  isObjectNode(u) &&
  u.redacted === true &&
  Object.keys(u).every((k) => k === 'redacted' || (k === 'digest' && typeof u.digest === 'string'))

// null and "" say nothing about the payer: they are kept, so the payload still shows which fields were empty.
const carriesNothing = (u: Json | undefined): boolean => u === undefined || u === null || u === ''

const isPayerField = (parentKey: string | undefined, key: string): boolean =>
  PAYER_FIELDS.has(key) || key === 'customer' || (parentKey === 'customer' && !CUSTOMER_FIELDS_IN_CLEAR.has(key))

const marker = (value: Json, options: RedactionOptions): RedactionMarker =>
  options.digest === undefined ? { redacted: true } : { redacted: true, digest: options.digest(typeof value === 'string' ? value : sortedJson(value)) }

const redactObject = (value: JsonObject, options: RedactionOptions, parentKey: string | undefined): JsonObject => {
  const out: Record<string, Json> = {}
  for (const [key, v] of Object.entries(value)) out[key] = redactEntry(parentKey, key, v, options)
  return out
}

const redactValue = (value: Json, options: RedactionOptions, parentKey: string | undefined): Json => {
  if (Array.isArray(value)) return value.map((v) => redactValue(v, options, parentKey))
  return isJsonObject(value) ? redactObject(value, options, parentKey) : value
}

const redactEntry = (parentKey: string | undefined, key: string, v: Json, options: RedactionOptions): Json => {
  if (carriesNothing(v) || isMarker(v)) return v
  // `customer` is an object of payer fields: its members are judged one by one; any other shape goes whole.
  if (key === 'customer' && isJsonObject(v)) return redactObject(v, options, 'customer')
  return isPayerField(parentKey, key) ? marker(v, options) : redactValue(v, options, key)
}

// Loops rather than every/entries: this walks every raw payload of every event a projection decodes.
const everyPayerFieldRedacted = (value: Json, parentKey: string | undefined): boolean => {
  if (Array.isArray(value)) {
    for (const v of value) if (!everyPayerFieldRedacted(v, parentKey)) return false
    return true
  }
  if (!isObjectNode(value)) return true
  for (const key in value) {
    const v = value[key]
    if (v === undefined || carriesNothing(v) || isMarker(v)) continue
    if (key === 'customer' && isObjectNode(v)) {
      if (!everyPayerFieldRedacted(v, 'customer')) return false
      continue
    }
    if (isPayerField(parentKey, key) || !everyPayerFieldRedacted(v, key)) return false
  }
  return true
}

/** Whether no payer field of `payload` holds a value in clear. */
export const isRedacted = (payload: JsonObject): payload is RedactedPayload => isJsonObject(payload) && everyPayerFieldRedacted(payload, undefined)

/**
 * The payload with every payer value replaced by a `RedactionMarker` (null and empty values are kept).
 * Ids (merchant, order, refund, subscription, gateway bill ids), amounts, statuses and signatures stay.
 * Pure: the digest, if wanted, comes from the caller.
 */
export const redactPayerData = (fields: Readonly<Record<string, unknown>>, options: RedactionOptions = {}): RedactedPayload => {
  const redacted = redactObject(toJsonObject(fields), options, undefined)
  if (!isRedacted(redacted)) throw new Error('redactPayerData: a payer field survived redaction (defect)')
  return redacted
}

/** Codec of a stored raw payload: decoding fails when a payer field holds a value in clear. */
// The brand's predicate sees what JsonObjectCodec decoded (JSON already): it walks the payer fields alone.
export const RedactedPayload = t.brand(JsonObjectCodec, (o): o is RedactedPayload => everyPayerFieldRedacted(o, undefined), 'RedactedPayload')
