import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { DomainEventMetadata, toStoreMetadata } from '../../../src/domain/events/metadata.ts'
import { decodeAll } from '../../../src/domain/violations.ts'

/* The metadata of every domain event: its codec at its edges, and the form the event store port takes. */

const base = { correlationId: 'corr', causationId: 'cause', recordedAt: '2026-01-01T03:00:00.000Z', source: 'notification' } as const

describe('domain event metadata', () => {
  it('recordedAt is kept as the text it was; a time that is not an ISO UTC instant is refused with the rule', () => {
    expect(DomainEventMetadata.decode(base)).toStrictEqual(E.right(base))
    const rule = 'must be an ISO-8601 UTC instant such as 2026-01-01T03:00:00.000Z'
    expect(decodeAll(DomainEventMetadata, { ...base, recordedAt: '2026-01-01 10:00:00' })).toEqual(E.left([{ path: 'recordedAt', rule }]))
    expect(decodeAll(DomainEventMetadata, { ...base, recordedAt: '2026-02-30T00:00:00.000Z' })).toEqual(E.left([{ path: 'recordedAt', rule }]))
    expect(E.isLeft(DomainEventMetadata.decode({ ...base, recordedAt: 1767236400000 }))).toBe(true)
    expect(E.isLeft(DomainEventMetadata.decode({ ...base, recordedAt: new Date('2026-01-01T03:00:00.000Z') }))).toBe(true)
  })

  it('is() holds for metadata with a real recordedAt text only', () => {
    expect(DomainEventMetadata.is(base)).toBe(true)
    expect(DomainEventMetadata.is({ ...base, recordedAt: 'yesterday' })).toBe(false)
    expect(DomainEventMetadata.is({ ...base, recordedAt: 1767236400000 })).toBe(false)
    expect(DomainEventMetadata.is({ ...base, recordedAt: new Date('2026-01-01T03:00:00.000Z') })).toBe(false)
  })

  it('the store form keeps the four fields and only the optional ones that are present', () => {
    expect(toStoreMetadata(base)).toStrictEqual({ ...base })
    expect(toStoreMetadata({ ...base, traceId: 't-1' })).toStrictEqual({ ...base, traceId: 't-1' })
    expect(toStoreMetadata({ ...base, signature: { verified: true } })).toStrictEqual({ ...base, signature: { verified: true } })
    expect(toStoreMetadata({ ...base, traceId: 't-2', signature: { verified: false, reason: 'bad sign' } })).toStrictEqual({ ...base, traceId: 't-2', signature: { verified: false, reason: 'bad sign' } })
    expect(Object.keys(toStoreMetadata({ ...base, signature: { verified: true } }).signature ?? {})).toEqual(['verified'])
  })
})

describe('the store form with a trace context', () => {
  it('given a traceparent, when turned into the store form, then it is kept', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    expect(toStoreMetadata({ ...base, traceparent })).toStrictEqual({ ...base, traceparent })
  })
})
