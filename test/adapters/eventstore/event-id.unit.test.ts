import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DNS_NAMESPACE, EVENT_ID_NAMESPACE, eventIdOf, isUuid, uuidv5 } from '../../../src/application/event-id.ts'

describe('uuidv5', () => {
  it('matches the published vector for www.example.com in the DNS namespace', () => {
    expect(uuidv5('www.example.com', DNS_NAMESPACE)).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2')
  })

  it('derives satang’s namespace from its documented name', () => {
    expect(uuidv5('satang.event-id', DNS_NAMESPACE)).toBe(EVENT_ID_NAMESPACE)
  })

  it('is deterministic, version 5, RFC 4122 variant, and separates names', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const id = eventIdOf(a)
        expect(isUuid(id)).toBe(true)
        expect(id[14]).toBe('5')
        expect('89ab').toContain(id[19])
        expect(eventIdOf(a)).toBe(id)
        if (a !== b) expect(eventIdOf(b)).not.toBe(id)
      }),
    )
  })

  it('rejects a namespace that is not a UUID', () => {
    expect(() => uuidv5('x', 'not-a-uuid')).toThrow(/not a UUID/)
  })

  it('gives each call the id of its own namespace, whichever namespace the call before named', () => {
    const inDns = uuidv5('www.example.com', DNS_NAMESPACE)
    const inSatang = uuidv5('www.example.com', EVENT_ID_NAMESPACE)
    expect(inSatang).not.toBe(inDns)
    expect(uuidv5('www.example.com', DNS_NAMESPACE)).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2')
    expect(eventIdOf('www.example.com')).toBe(inSatang)
    expect(uuidv5('www.example.com', DNS_NAMESPACE.toUpperCase())).toBe(inDns)
    expect(() => uuidv5('www.example.com', 'not-a-uuid')).toThrow(/not a UUID/)
    expect(uuidv5('www.example.com', EVENT_ID_NAMESPACE)).toBe(inSatang)
  })
})
