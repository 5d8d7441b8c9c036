import * as E from 'fp-ts/lib/Either.js'
import { decodeDomainEvent, describeEventDecodeError } from '../../domain/events/registry.ts'
import { HEADERS, typeOfCeType } from './message.ts'
import { HEADER_NAMES } from './packed-records.ts'

/*
 * The check every record passes before the producer thread sends it: its value must decode with the
 * codec of its event type and schema version (the domain's registry, what `schemas/` is generated from).
 * Nothing the relay cannot vouch for reaches consumers: the relay stops before such an event, and a
 * version of satang that knows it publishes it.
 *
 * The check runs on the producer thread, on the packed request (packed-records.ts), because it is most
 * of the per-event work and the relay's own thread was the one the drain waited on (docs/development.md
 * "The relay's own produce requests"). It reads each record's `ce_type` header and value; the stream,
 * revision and position for the error line come from the record's other headers.
 */

const TYPE_HEADER = HEADER_NAMES.indexOf(HEADERS.type)
const SUBJECT_HEADER = HEADER_NAMES.indexOf(HEADERS.subject)
const REVISION_HEADER = HEADER_NAMES.indexOf(HEADERS.streamRevision)
const POSITION_HEADER = HEADER_NAMES.indexOf(HEADERS.position)

/** A record the check refused: the first of its request. */
export type RefusedRecord = {
  /** Its index in the request: the records before it passed. */
  readonly index: number
  /** Where it starts in the packed request: the records before it end there. */
  readonly offset: number
  /** Which event, and why, as the relay's error line says it: `<stream> revision <n> at position <p>: <why>`. */
  readonly reason: string
}

/**
 * The first record of a packed request whose value does not decode with its type's codec, or null when
 * every one does. A record is refused also when it has no `ce_type`, or one not of the form satang
 * writes, or a value that is not JSON.
 */
export const firstRefusedRecord = (buffer: ArrayBuffer, length: number): RefusedRecord | null => {
  const buf = Buffer.from(buffer, 0, length)
  const count = buf.readUInt32LE(0)
  // Parsed `ce_type`s: a request holds few distinct ones.
  const types = new Map<string, ReturnType<typeof typeOfCeType>>()
  // Where this record's header values start and end, by header (-1: absent): the stream, revision and
  // position are read only for a refused record's error line.
  const spans = new Int32Array(2 * HEADER_NAMES.length)
  let at = 4
  for (let index = 0; index < count; index++) {
    const offset = at
    const keyLength = buf.readUInt32LE(at + 8)
    at += 12 + keyLength
    const valueLength = buf.readUInt32LE(at)
    const valueAt = at + 4
    at = valueAt + valueLength
    const headers = buf.readUInt8(at)
    at += 1
    let ceType: string | undefined
    spans.fill(-1)
    for (let h = 0; h < headers; h++) {
      const name = buf.readUInt8(at)
      const n = buf.readUInt32LE(at + 1)
      if (name === TYPE_HEADER) ceType = buf.toString('utf8', at + 5, at + 5 + n)
      else if (name === SUBJECT_HEADER || name === REVISION_HEADER || name === POSITION_HEADER) {
        spans[2 * name] = at + 5
        spans[2 * name + 1] = at + 5 + n
      }
      at += 5 + n
    }
    const why = refusal(ceType, buf, valueAt, valueLength, types)
    if (why !== null) {
      const header = (name: number, absent: string): string => {
        const from = spans[2 * name] ?? -1
        return from < 0 ? absent : buf.toString('utf8', from, spans[2 * name + 1])
      }
      return { index, offset, reason: `${header(SUBJECT_HEADER, '(no ce_subject)')} revision ${header(REVISION_HEADER, '?')} at position ${header(POSITION_HEADER, '?')}: ${why}` }
    }
  }
  if (at !== length) throw new Error(`firstRefusedRecord: ${String(count)} records take ${String(at)} bytes of a request of ${String(length)} (a defect of packRequests)`)
  return null
}

/** Why a record cannot be published, or null when its value decodes. */
const refusal = (ceType: string | undefined, buf: Buffer, valueAt: number, valueLength: number, types: Map<string, ReturnType<typeof typeOfCeType>>): string | null => {
  if (ceType === undefined) return 'no ce_type header'
  let parsed = types.get(ceType)
  if (parsed === undefined && !types.has(ceType)) {
    parsed = typeOfCeType(ceType)
    types.set(ceType, parsed)
  }
  if (parsed === undefined) return `ce_type ${ceType} is not satang.<Type>.v<version>`
  let data: unknown
  try {
    data = JSON.parse(buf.toString('utf8', valueAt, valueAt + valueLength))
  } catch (e) {
    return `its value is not JSON (${e instanceof Error ? e.message : String(e)})`
  }
  const decoded = decodeDomainEvent(parsed.type, parsed.schemaVersion, data)
  return E.isLeft(decoded) ? describeEventDecodeError(decoded.left) : null
}

/**
 * The records of a packed request before `refused`, as a request of their own in the same buffer (its
 * count rewritten), as its length: what the producer thread sends when the check refused a record (0: none).
 */
export const truncatedBefore = (buffer: ArrayBuffer, refused: RefusedRecord): number => {
  if (refused.index === 0) return 0
  Buffer.from(buffer).writeUInt32LE(refused.index, 0)
  return refused.offset
}
