import { describe, expect, it } from 'vitest'
import { CheckoutApplyResponse } from '../../../src/domain/gateway/checkout.ts'
import { EmptyEnvelope, Envelope, envelopeOf, isGatewaySuccess } from '../../../src/domain/gateway/envelope.ts'
import { subscriptionCancel } from '../../../src/domain/gateway/operations.ts'
import { decoded, MERCHANT_ID, NOW, ORDER_ID, violations } from './builders.ts'

const data = {
  merchant_id: MERCHANT_ID,
  merchant_order_id: 'ORDER-1',
  order_id: ORDER_ID,
  order_status: 'PI',
  order_amount: '10.00',
  order_currency: 'THB',
  create_time: NOW,
  link_url: 'https://pay.example/c/1',
}
const CheckoutEnvelope = Envelope(CheckoutApplyResponse)

describe('common response envelope', () => {
  it('decodes a success: code 200000 and message Success, data decoded', () => {
    const reply = decoded(CheckoutEnvelope, { code: 200000, message: 'Success', data, trace_id: 'tr-1' })
    expect(reply).toEqual({ _tag: 'GatewaySuccess', code: 200000, message: 'Success', trace_id: 'tr-1', data })
    expect(isGatewaySuccess(reply)).toBe(true)
  })
  it('decodes any other integer code as a gateway error, without decoding data', () => {
    const reply = decoded(CheckoutEnvelope, { code: 400001, message: 'Invalid parameter', trace_id: 'tr-2', data: { field: 'x' } })
    expect(reply).toEqual({ _tag: 'GatewayError', code: 400001, message: 'Invalid parameter', trace_id: 'tr-2', data: { field: 'x' } })
    expect(isGatewaySuccess(reply)).toBe(false)
    expect(decoded(CheckoutEnvelope, { code: 0, message: 'Success', trace_id: 'tr-4' })._tag).toBe('GatewayError')
  })
  it('rejects a code that is not an integer', () => {
    expect(violations(CheckoutEnvelope, { code: '200000', message: 'Success', trace_id: 't', data })).toEqual([
      { path: 'code', rule: 'must be an integer (200000 means success)' },
    ])
    expect(violations(CheckoutEnvelope, { code: 200000.5, message: 'Success', trace_id: 't', data })).toEqual([
      { path: 'code', rule: 'must be an integer (200000 means success)' },
    ])
  })
  it('rejects a success without the Success message, without trace_id, with bad data: all at once', () => {
    expect(violations(CheckoutEnvelope, { code: 200000, message: 'OK', data: { ...data, link_url: undefined } })).toEqual([
      { path: 'trace_id', rule: 'is required' },
      { path: 'message', rule: 'must be Success when code is 200000' },
      { path: 'data.link_url', rule: 'is required' },
    ])
  })
  it('requires data on success', () => {
    expect(violations(CheckoutEnvelope, { code: 200000, message: 'Success', trace_id: 't' })).toEqual([{ path: 'data', rule: 'is required' }])
  })
  it('encodes a reply back to the wire form', () => {
    const wire = { code: 200000, message: 'Success', trace_id: 'tr-1', data }
    expect(CheckoutEnvelope.encode(decoded(CheckoutEnvelope, wire))).toEqual(wire)
    const error = { code: 500000, message: 'Internal', trace_id: 'tr-3' }
    expect(CheckoutEnvelope.encode(decoded(CheckoutEnvelope, error))).toEqual(error)
  })
})

describe('envelope without data (subscription cancel)', () => {
  it('accepts a success without data', () => {
    expect(decoded(EmptyEnvelope, { code: 200000, message: 'Success', trace_id: 't' })).toEqual({
      _tag: 'GatewaySuccess', code: 200000, message: 'Success', trace_id: 't', data: null,
    })
    expect(EmptyEnvelope.encode(decoded(EmptyEnvelope, { code: 200000, message: 'Success', trace_id: 't' }))).toEqual({ code: 200000, message: 'Success', trace_id: 't' })
  })
  it('rejects data on success', () => {
    expect(violations(EmptyEnvelope, { code: 200000, message: 'Success', trace_id: 't', data: {} })).toEqual([{ path: 'data', rule: 'must be absent in this response' }])
  })
  it('is what envelopeOf gives for the cancel operation', () => {
    expect(violations(envelopeOf(subscriptionCancel.response), { code: 200000, message: 'Success', trace_id: 't', data: {} })).toEqual([
      { path: 'data', rule: 'must be absent in this response' },
    ])
  })
})

describe('the envelope, rule by rule', () => {
  const WithData = envelopeOf(CheckoutApplyResponse)
  it('not an object', () => {
    expect(violations(CheckoutEnvelope, 'hello')).toEqual([{ path: '', rule: 'must be an object' }])
    expect(violations(CheckoutEnvelope, null)).toEqual([{ path: '', rule: 'must be an object' }])
  })
  it('each field missing or of the wrong type is named on its own', () => {
    expect(violations(CheckoutEnvelope, {})).toEqual([
      { path: 'code', rule: 'is required' },
      { path: 'message', rule: 'is required' },
      { path: 'trace_id', rule: 'is required' },
    ])
    expect(violations(CheckoutEnvelope, { code: 400001, message: 7, trace_id: '' })).toEqual([
      { path: 'message', rule: 'must be a string' },
      { path: 'trace_id', rule: 'must be a non-empty string' },
    ])
    expect(violations(CheckoutEnvelope, { code: 400001, message: 'x', trace_id: 5 })).toEqual([{ path: 'trace_id', rule: 'must be a non-empty string' }])
    expect(violations(CheckoutEnvelope, { code: 400001, message: 'x', trace_id: 't' })).toEqual([])
  })
  it('an error code with any message; a success code must say Success', () => {
    expect(decoded(CheckoutEnvelope, { code: 400001, message: 'Bad', trace_id: 't' })).toEqual({ _tag: 'GatewayError', code: 400001, message: 'Bad', trace_id: 't' })
    expect(violations(CheckoutEnvelope, { code: 200000, message: 'OK', trace_id: 't', data })).toEqual([{ path: 'message', rule: 'must be Success when code is 200000' }])
  })
  it('encode: an error without data has no data key; with data, its data', () => {
    expect(CheckoutEnvelope.encode({ _tag: 'GatewayError', code: 1, message: 'm', trace_id: 't' })).toStrictEqual({ code: 1, message: 'm', trace_id: 't' })
    expect(CheckoutEnvelope.encode({ _tag: 'GatewayError', code: 1, message: 'm', trace_id: 't', data: { x: 1 } })).toStrictEqual({ code: 1, message: 'm', trace_id: 't', data: { x: 1 } })
    expect(EmptyEnvelope.encode({ _tag: 'GatewaySuccess', code: 200000, message: 'Success', trace_id: 't', data: null })).toStrictEqual({ code: 200000, message: 'Success', trace_id: 't' })
  })
  it('is(): a decoded reply, not wire text', () => {
    expect([CheckoutEnvelope.is({ _tag: 'GatewaySuccess' }), CheckoutEnvelope.is({ _tag: 'GatewayError' }), CheckoutEnvelope.is({ _tag: 'Other' }), CheckoutEnvelope.is({ code: 1 }), CheckoutEnvelope.is('x')]).toEqual([true, true, false, false, false])
  })
  it('envelopeOf with a data codec: decodes and encodes its data; the names say what it carries', () => {
    const wire = { code: 200000, message: 'Success', trace_id: 't', data }
    expect(WithData.encode(decoded(WithData, wire))).toEqual(wire)
    expect(WithData.encode({ _tag: 'GatewaySuccess', code: 200000, message: 'Success', trace_id: 't', data: null })).toStrictEqual({ code: 200000, message: 'Success', trace_id: 't' })
    expect([WithData.name, envelopeOf(null).name, EmptyEnvelope.name, CheckoutEnvelope.name]).toEqual([`Envelope<${CheckoutApplyResponse.name}>`, 'Envelope<none>', 'Envelope<none>', `Envelope<${CheckoutApplyResponse.name}>`])
    expect(decoded(envelopeOf(null), { code: 200000, message: 'Success', trace_id: 't', data: null })).toEqual({ _tag: 'GatewaySuccess', code: 200000, message: 'Success', trace_id: 't', data: null })
    expect(violations(WithData, { code: 200000, message: 'Success', trace_id: 't', data: { ...data, order_amount: 'x' } }).map((v) => v.path)).toContain('data.order_amount')
  })
})

describe('the envelope, built and used within one test', () => {
  it('given envelopeOf with a data codec, when it decodes a success, then its data is decoded, not refused as unexpected', () => {
    // given: the envelope is built here, not when the module loads
    const envelope = envelopeOf(CheckoutApplyResponse)
    // when/then
    expect(decoded(envelope, { code: 200000, message: 'Success', trace_id: 't', data })).toEqual({ _tag: 'GatewaySuccess', code: 200000, message: 'Success', trace_id: 't', data })
    expect(envelope.name).toBe(`Envelope<${CheckoutApplyResponse.name}>`)
    const wire = { code: 200000, message: 'Success', trace_id: 't', data }
    expect(envelope.encode(decoded(envelope, wire))).toStrictEqual(wire)
  })
  it('given Envelope built here with a data codec, when it decodes and encodes a success, then its data goes through that codec both ways', () => {
    const envelope = Envelope(CheckoutApplyResponse)
    const wire = { code: 200000, message: 'Success', trace_id: 't', data }
    expect(decoded(envelope, wire)).toEqual({ _tag: 'GatewaySuccess', code: 200000, message: 'Success', trace_id: 't', data })
    expect(envelope.encode(decoded(envelope, wire))).toStrictEqual(wire)
    expect(violations(envelope, { ...wire, data: { ...data, order_amount: 'x' } }).map((v) => v.path)).toEqual(['data.order_amount'])
    expect(envelope.name).toBe(`Envelope<${CheckoutApplyResponse.name}>`)
  })
  it('given a built envelope, when asked is(), then it answers for decoded replies only', () => {
    const envelope = envelopeOf(CheckoutApplyResponse)
    expect([envelope.is({ _tag: 'GatewaySuccess' }), envelope.is({ _tag: 'GatewayError' }), envelope.is({ _tag: 'Other' }), envelope.is({ code: 1 }), envelope.is('x')]).toEqual([true, true, false, false, false])
    expect([EmptyEnvelope.is({ _tag: 'GatewayError' }), Envelope(CheckoutApplyResponse).is(null)]).toEqual([true, false])
  })
  it('given a success code with a message that is not a string, when decoded, then only the type of the message is named', () => {
    expect(violations(CheckoutEnvelope, { code: 200000, message: 7, trace_id: 't', data })).toEqual([{ path: 'message', rule: 'must be a string' }])
  })
  it('given an error without data, when decoded, then the reply has no data key at all', () => {
    const reply = decoded(CheckoutEnvelope, { code: 400001, message: 'Bad', trace_id: 't' })
    expect(reply).toStrictEqual({ _tag: 'GatewayError', code: 400001, message: 'Bad', trace_id: 't' })
    expect(Object.keys(reply)).toEqual(['_tag', 'code', 'message', 'trace_id'])
  })
  it('given an error reply with data, when encoded by an envelope whose success carries no data, then its data is kept', () => {
    const error = { _tag: 'GatewayError', code: 400001, message: 'Bad', trace_id: 't', data: { field: 'x' } } as const
    expect(EmptyEnvelope.encode(error)).toStrictEqual({ code: 400001, message: 'Bad', trace_id: 't', data: { field: 'x' } })
    expect(envelopeOf(null).encode(error)).toStrictEqual({ code: 400001, message: 'Bad', trace_id: 't', data: { field: 'x' } })
  })
})
