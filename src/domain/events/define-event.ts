import * as E from 'fp-ts/lib/Either.js'
import type * as t from 'io-ts'
import type { JsonObject } from './envelope.ts'
import { violationsOf, type Violation } from '../violations.ts'

/** A domain event in memory: its type name and its data at the newest schema version. */
export type DomainEventOf<T extends string, A> = { readonly type: T; readonly data: A }

/** What the event store keeps of an event besides its id and metadata. */
export type SerializedEvent<T extends string = string> = { readonly type: T; readonly schemaVersion: number; readonly data: JsonObject }

/** A stored event that cannot be read. Reported with its type and version; never dropped. */
export type EventDecodeError =
  | { readonly _tag: 'UnknownEventType'; readonly type: string; readonly schemaVersion: number }
  | { readonly _tag: 'UnknownSchemaVersion'; readonly type: string; readonly schemaVersion: number; readonly knownVersions: ReadonlyArray<number> }
  | { readonly _tag: 'InvalidEventData'; readonly type: string; readonly schemaVersion: number; readonly violations: ReadonlyArray<Violation> }

/** One event type with every schema version it ever had. */
export type EventDefinition<T extends string, A> = {
  readonly type: T
  /** The newest version: every new event is written at it. */
  readonly schemaVersion: number
  readonly knownVersions: ReadonlyArray<number>
  readonly make: (data: A) => DomainEventOf<T, A>
  /** The data at the newest version, as JSON (satang as digit strings, instants as ISO text). */
  readonly encode: (data: A) => SerializedEvent<T>
  /** Decodes stored data of `schemaVersion` with that version's codec, then upcasts it to the newest shape. */
  readonly decode: (schemaVersion: number, data: unknown) => E.Either<EventDecodeError, DomainEventOf<T, A>>
  readonly is: <Ev extends { readonly type: string }>(e: Ev) => e is Extract<Ev, { readonly type: T }>
  /** The codec of one stored version's data (for the published JSON Schemas), undefined for an unknown version. */
  readonly codecOf: (schemaVersion: number) => t.Type<unknown, JsonObject, unknown> | undefined
  /**
   * One upcasting step: decoded data of `fromVersion` to the shape of `fromVersion + 1` (the frozen
   * fixtures test each step on its own); undefined for the newest or an unknown version.
   */
  readonly upcastStep: (fromVersion: number, data: unknown) => unknown
}

/** A codec of one version's data: decodes stored JSON, encodes to a JSON object. */
export type VersionCodec<A, O extends JsonObject> = t.Type<A, O, unknown>

type Step = { readonly codec: t.Type<unknown, JsonObject, unknown>; readonly upcast: ((d: unknown) => unknown) | undefined }

/**
 * Defines an event type with its versions `1..N` and the upcasters from each version to the next
 * (`upcasters[k]` turns version k data into version k+1 data). Old codecs stay forever: stored events
 * are never rewritten; they are read with their own version's codec and upcast on the way in.
 * (Overloads go from most versions to fewest: an upcaster's parameter is typed by the first overload
 * that reaches it.)
 */
export function defineEvent<T extends string, A1, O1 extends JsonObject, A2, O2 extends JsonObject, A3, O3 extends JsonObject>(
  type: T,
  versions: { readonly 1: VersionCodec<A1, O1>; readonly 2: VersionCodec<A2, O2>; readonly 3: VersionCodec<A3, O3> },
  upcasters: { readonly 1: (d: A1) => A2; readonly 2: (d: A2) => A3 },
): EventDefinition<T, A3>
export function defineEvent<T extends string, A1, O1 extends JsonObject, A2, O2 extends JsonObject>(
  type: T,
  versions: { readonly 1: VersionCodec<A1, O1>; readonly 2: VersionCodec<A2, O2> },
  upcasters: { readonly 1: (d: A1) => A2 },
): EventDefinition<T, A2>
export function defineEvent<T extends string, A1, O1 extends JsonObject>(type: T, versions: { readonly 1: VersionCodec<A1, O1> }): EventDefinition<T, A1>
export function defineEvent(
  type: string,
  versions: Readonly<Record<number, t.Type<unknown, JsonObject, unknown>>>,
  upcasters: Readonly<Record<number, (d: unknown) => unknown>> = {},
): EventDefinition<string, unknown> {
  const steps = new Map<number, Step>()
  for (const [key, codec] of Object.entries(versions)) steps.set(Number(key), { codec, upcast: upcasters[Number(key)] })
  const knownVersions = [...steps.keys()].sort((a, b) => a - b)
  const newest = knownVersions.length
  const latest = steps.get(newest)
  if (latest === undefined || knownVersions.some((v, i) => v !== i + 1)) throw new Error(`defineEvent ${type}: versions must be 1..N`)
  for (const v of knownVersions) {
    if (v < newest && steps.get(v)?.upcast === undefined) throw new Error(`defineEvent ${type}: no upcaster from version ${String(v)}`)
  }

  const upcastFrom = (version: number, data: unknown): unknown => {
    let current = data
    for (let v = version; v < newest; v++) {
      const upcast = steps.get(v)?.upcast
      // Checked above: every version but the newest has an upcaster.
      if (upcast !== undefined) current = upcast(current)
    }
    return current
  }

  return {
    type,
    schemaVersion: newest,
    knownVersions,
    make: (data) => ({ type, data }),
    encode: (data) => ({ type, schemaVersion: newest, data: latest.codec.encode(data) }),
    decode: (schemaVersion, data) => {
      const step = steps.get(schemaVersion)
      if (step === undefined) return E.left({ _tag: 'UnknownSchemaVersion', type, schemaVersion, knownVersions })
      const decoded = step.codec.decode(data)
      if (E.isLeft(decoded)) return E.left({ _tag: 'InvalidEventData', type, schemaVersion, violations: violationsOf(decoded.left) })
      return E.right({ type, data: upcastFrom(schemaVersion, decoded.right) })
    },
    is: <Ev extends { readonly type: string }>(e: Ev): e is Extract<Ev, { readonly type: string }> => e.type === type,
    codecOf: (schemaVersion) => steps.get(schemaVersion)?.codec,
    upcastStep: (fromVersion, data) => {
      const upcast = fromVersion < newest ? steps.get(fromVersion)?.upcast : undefined
      return upcast === undefined ? undefined : upcast(data)
    },
  }
}
