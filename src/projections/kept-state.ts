import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { EventDefinition } from '../domain/events/define-event.ts'
import { JsonObjectCodec } from '../domain/events/json.ts'
import { formatViolations, violationsOf } from '../domain/violations.ts'
import { qualified, type ProjectionTarget } from './types.ts'

/*
 * What the projections that keep an aggregate's state between batches share (orders, refunds,
 * subscriptions): event data inside a state, decoding errors in one line, and loading the kept states
 * of a batch's streams in one query.
 */

/** Event data kept inside a state, with its schema version, so a later version of the event still reads it. */
export const KeptEventData = t.strict({ schemaVersion: t.number, data: JsonObjectCodec })
export type KeptEventData = t.TypeOf<typeof KeptEventData>

/** The data of an event of type `def`, kept at the event's newest version. */
export const keepEventData = <A>(def: EventDefinition<string, A>, data: A): KeptEventData => {
  const { schemaVersion, data: json } = def.encode(data)
  return { schemaVersion, data: json }
}

/** Reads kept event data back with its own version's codec (upcast to the newest); throws, naming `what` and the type, when it does not decode. */
export const readKeptEventData =
  (what: string) =>
  <A>(def: EventDefinition<string, A>) =>
  (kept: KeptEventData): A => {
    const decoded = def.decode(kept.schemaVersion, kept.data)
    if (E.isLeft(decoded)) throw new Error(`${what}: ${def.type} data does not decode (${decoded.left._tag})`)
    return decoded.right.data
  }

/** io-ts errors as one line. */
export const describeErrors = (errors: t.Errors): string => formatViolations(violationsOf(errors)).replaceAll('\n', '; ')

/**
 * The kept states (`projection_state`) of `streams` in `table`, decoded by `decode`; streams without a
 * row are absent. A state that does not decode stops the batch, naming the table and the stream.
 */
export const loadKeptStates = async <V>(target: ProjectionTarget, table: string, streams: ReadonlyArray<string>, decode: (json: unknown) => V): Promise<Map<string, V>> => {
  const { rows } = await target.client.query<{ stream_name: string; projection_state: unknown }>(
    `select stream_name, projection_state from ${qualified(target.schema, table)} where stream_name = any($1::text[])`,
    [streams],
  )
  const kept = new Map<string, V>()
  for (const row of rows) {
    try {
      kept.set(row.stream_name, decode(row.projection_state))
    } catch (e) {
      throw new Error(`${table}: the kept state of ${row.stream_name}: ${e instanceof Error ? e.message : String(e)}`, { cause: e })
    }
  }
  return kept
}
