import { readFileSync } from 'node:fs'
import * as t from 'io-ts'
import { describe, expect, it } from 'vitest'
import { jsonSchemaOf } from '../../../src/adapters/json-schema.ts'
import { ceTypeOf } from '../../../src/adapters/kafka/message.ts'
import { eventSchemaFile, LEAF_SCHEMAS, publishedSchemas, publishedVersions, schemaText } from '../../../src/adapters/kafka/schemas.ts'
import { encodeDomainEvent } from '../../../src/domain/events/registry.ts'
import { oneOf } from '../../../src/domain/gateway/text-codecs.ts'
import { allEvents } from '../../domain/events/catalogue.ts'
import { committedSchemaFiles, committedValidators, schemaErrors } from './schema-validator.ts'

describe('schemas/ (the JSON Schemas of the Kafka messages)', () => {
  it('are exactly what `npm run schemas` generates from the event codecs (run it after changing an event)', () => {
    const generated = publishedSchemas()
    const committed = committedSchemaFiles()
    expect([...committed.keys()]).toEqual([...generated.keys()])
    for (const [file, schema] of generated) expect({ file, text: committed.get(file) }).toEqual({ file, text: schemaText(schema) })
  })

  it('cover every event type at every schema version, and the headers', () => {
    const files = [...committedSchemaFiles().keys()]
    for (const v of publishedVersions()) expect(files).toContain(eventSchemaFile(v.type, v.version))
    expect(files).toContain('headers.schema.json')
    const headers = JSON.parse(committedSchemaFiles().get('headers.schema.json') ?? '{}') as { properties: { ce_type: { enum: string[] } } }
    expect(headers.properties.ce_type.enum).toEqual(publishedVersions().map((v) => ceTypeOf(v.type, v.version)))
  })

  it('accept the data of every event type as the codecs encode it (payer data redacted)', () => {
    const validators = committedValidators()
    const events = allEvents()
    expect(new Set(events.map((e) => e.type)).size).toBe(new Set(publishedVersions().map((v) => v.type)).size)
    for (const e of events) {
      const stored = encodeDomainEvent(e)
      expect({ type: stored.type, errors: schemaErrors(validators, eventSchemaFile(stored.type, stored.schemaVersion), stored.data) }).toEqual({ type: stored.type, errors: [] })
    }
  })

  it('accept stored data of an old version (StatusObserved v1, Bangkok wall times) and refuse it under the newer schema', () => {
    const validators = committedValidators()
    const v1 = JSON.parse(readFileSync(new URL('../../fixtures/events/status-observed.v1.json', import.meta.url), 'utf8')) as { data: unknown }
    expect(schemaErrors(validators, 'StatusObserved.v1.schema.json', v1.data)).toEqual([])
    expect(schemaErrors(validators, 'StatusObserved.v2.schema.json', v1.data).length).toBeGreaterThan(0)
  })

  it('refuse what the codecs refuse: a missing field, an extra field, a decimal amount, an unknown enumeration value', () => {
    const validators = committedValidators()
    const created = allEvents().find((e) => e.type === 'OrderCreated')
    if (created === undefined) throw new Error('no OrderCreated in the catalogue')
    const data = encodeDomainEvent(created).data
    const { amount: _amount, ...withoutAmount } = data
    expect(schemaErrors(validators, 'OrderCreated.v1.schema.json', withoutAmount).join()).toContain("must have required property 'amount'")
    expect(schemaErrors(validators, 'OrderCreated.v1.schema.json', { ...data, extra: 1 }).join()).toContain('must NOT have additional properties')
    expect(schemaErrors(validators, 'OrderCreated.v1.schema.json', { ...data, amount: '420.00' }).join()).toContain('must match pattern')
    expect(schemaErrors(validators, 'OrderCreated.v1.schema.json', { ...data, operation: 'teleport' }).join()).toContain('must be equal to one of the allowed values')
  })
})

describe('jsonSchemaOf (io-ts → JSON Schema)', () => {
  it('describes objects, optional members, nullables, arrays, literals and enumerations', () => {
    const codec = t.intersection([t.strict({ a: t.string, b: t.union([t.number, t.null]), c: t.array(t.literal('x')) }), t.partial({ d: oneOf('D', ['p', 'q']) })])
    expect(jsonSchemaOf(codec, LEAF_SCHEMAS)).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { anyOf: [{ type: 'number' }, { type: 'null' }] }, c: { type: 'array', items: { const: 'x' } }, d: { type: 'string', enum: ['p', 'q'] } },
      required: ['a', 'b', 'c'],
    })
  })

  it('refuses a custom codec it has no schema for, naming it and where it is', () => {
    const Weird = new t.Type<string, string, unknown>('Weird', (u): u is string => typeof u === 'string', (u, c) => t.failure(u, c), String)
    expect(() => jsonSchemaOf(t.strict({ nested: t.strict({ w: Weird }) }), LEAF_SCHEMAS, 'X.v1')).toThrow('X.v1.nested.w: no JSON Schema for codec Weird (a custom codec: add it to the leaf schemas)')
  })
})
