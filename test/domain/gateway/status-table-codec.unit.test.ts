import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { StatusTableCodec } from '../../../src/domain/gateway/statuses.ts'
import { decodeAll } from '../../../src/domain/violations.ts'

/* A configured table of extra status codes: decoded whole, every broken rule reported. */

describe('StatusTableCodec', () => {
  it('decodes a table of 2-character codes to the same table; an empty table too', () => {
    const table = { XY: { meaning: 'held by the bank', outcome: 'pending' }, PF: { meaning: 'failed', outcome: 'failed' } }
    expect(StatusTableCodec.decode(table)).toStrictEqual(E.right(table))
    expect(StatusTableCodec.decode({})).toStrictEqual(E.right({}))
  })

  it('not an object: one violation saying so', () => {
    for (const u of ['XY', null, [], 7]) expect(decodeAll(StatusTableCodec, u)).toEqual(E.left([{ path: '', rule: 'must be an object' }]))
  })

  it('reports the code and its entry both when both are wrong', () => {
    expect(decodeAll(StatusTableCodec, { XYZ: { meaning: 'm', outcome: 'pending' } })).toEqual(E.left([{ path: 'XYZ', rule: 'must be a 2-character status code such as WP or PS' }]))
    expect(decodeAll(StatusTableCodec, { X: { meaning: 'm', outcome: 'nope' }, OK: { meaning: 'm', outcome: 'succeeded' } })).toEqual(
      E.left([
        { path: 'X', rule: 'must be a 2-character status code such as WP or PS' },
        { path: 'X.outcome', rule: 'must be pending, succeeded or failed' },
      ]),
    )
  })

  it('is() holds for a table of valid codes and entries only', () => {
    expect(StatusTableCodec.is({ XY: { meaning: 'm', outcome: 'pending' } })).toBe(true)
    expect(StatusTableCodec.is({})).toBe(true)
    expect(StatusTableCodec.is('XY')).toBe(false)
    expect(StatusTableCodec.is({ XYZ: { meaning: 'm', outcome: 'pending' } })).toBe(false)
    expect(StatusTableCodec.is({ XY: { meaning: 'm', outcome: 'nope' } })).toBe(false)
    expect(StatusTableCodec.is({ XY: { meaning: 'm', outcome: 'pending' }, X: { meaning: 'm', outcome: 'pending' } })).toBe(false)
    expect(StatusTableCodec.is({ X: { meaning: 'm', outcome: 'pending' }, XY: { meaning: 'm', outcome: 'pending' } })).toBe(false)
  })
})
