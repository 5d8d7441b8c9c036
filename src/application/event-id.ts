import { createHash } from 'node:crypto'

/** RFC 4122 namespace for DNS names; used by the published test vectors. */
export const DNS_NAMESPACE = '6ba7b810-9dad-11d1-80b4-00c04fd430c8'
/** satang's namespace for event ids: UUIDv5 of `satang.event-id` in the DNS namespace. Never change it: ids derived from it are stored. */
export const EVENT_ID_NAMESPACE = '667f9c41-0cf1-5480-8f01-2a75fa91e4fa'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A lowercase canonical UUID (`8-4-4-4-12` hex digits). */
export const isUuid = (s: string): boolean => UUID.test(s)

const uuidBytes = (uuid: string): Buffer => {
  const lower = uuid.toLowerCase()
  if (!isUuid(lower)) throw new Error(`not a UUID: ${uuid}`)
  return Buffer.from(lower.replaceAll('-', ''), 'hex')
}

const format = (b: Buffer): string => {
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`
}

/** The bytes of the namespace of the last call (nearly every call names EVENT_ID_NAMESPACE): parsed once. */
let lastNamespace: { readonly uuid: string; readonly bytes: Buffer } | undefined

const namespaceBytes = (uuid: string): Buffer => {
  if (lastNamespace?.uuid !== uuid) lastNamespace = { uuid, bytes: uuidBytes(uuid) }
  return lastNamespace.bytes
}

/** RFC 4122 §4.3 name-based UUID, version 5 (SHA-1). */
export const uuidv5 = (name: string, namespace: string): string => {
  const hash = createHash('sha1').update(namespaceBytes(namespace)).update(name, 'utf8').digest()
  const bytes = hash.subarray(0, 16)
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  return format(bytes)
}

/**
 * The event id for a natural key (for example `callback:<merchant>:<order>:<status>:<notify id>`):
 * a redelivered message maps to the same id, so appending it again stores nothing.
 */
export const eventIdOf = (naturalKey: string): string => uuidv5(naturalKey, EVENT_ID_NAMESPACE)
