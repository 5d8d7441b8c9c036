import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isRedacted, PAYER_FIELDS, RedactedPayload, redactPayerData } from '../../../src/domain/events/redaction.ts'
import { PAYER } from '../support/values.ts'

describe('redactPayerData', () => {
  it('replaces every payer field with a marker and keeps ids, amounts, statuses and the signature', () => {
    const redacted = redactPayerData({
      merchant_id: '140000000000000001',
      merchant_order_id: 'ORDER-1',
      order_amount: '100.00',
      order_status: 'PS',
      mobile_number: '0898765432',
      buyer_identity_code: '286512345678901234',
      client: { remote_ip: '203.0.113.7' },
      card: { token: 'tok_4242' },
      customer: { ...PAYER, customer_type: 'PERSON', id_type: 'ID_CARD', nickname: 'Chai' },
      products: [{ name: 'Latte', unit_price: '100.00', quantity: '1' }],
      sign: 'c2ln',
    })
    expect(redacted).toEqual({
      merchant_id: '140000000000000001',
      merchant_order_id: 'ORDER-1',
      order_amount: '100.00',
      order_status: 'PS',
      mobile_number: { redacted: true },
      buyer_identity_code: { redacted: true },
      client: { remote_ip: { redacted: true } },
      card: { redacted: true },
      customer: {
        merchant_user_id: 'u-1',
        customer_type: 'PERSON',
        id_type: 'ID_CARD',
        // A field the spec does not list is payer info too, inside `customer`.
        nickname: { redacted: true },
        full_name: { redacted: true },
        first_name: { redacted: true },
        last_name: { redacted: true },
        email: { redacted: true },
        phone: { redacted: true },
        id_no: { redacted: true },
        company: { redacted: true },
        address: { redacted: true },
      },
      products: [{ name: 'Latte', unit_price: '100.00', quantity: '1' }],
      sign: 'c2ln',
    })
  })
  it('keeps empty values (they say nothing) and a customer that is not an object goes whole', () => {
    expect(redactPayerData({ customer: { phone: '', email: null }, mobile_number: '' })).toEqual({ customer: { phone: '', email: null }, mobile_number: '' })
    expect(redactPayerData({ customer: 'Somchai Jaidee' })).toEqual({ customer: { redacted: true } })
  })
  it('carries a keyed digest when the caller gives one (objects digested as canonical JSON)', () => {
    const digest = (s: string): string => `d(${s.length.toString()})`
    expect(redactPayerData({ customer: { email: 'a@b.c', address: { city: 'Bangkok' } } }, { digest })).toEqual({
      customer: { email: { redacted: true, digest: 'd(5)' }, address: { redacted: true, digest: 'd(18)' } },
    })
  })
  it('is idempotent and always yields a payload with no payer value in clear (property)', () => {
    const key = fc.oneof(fc.constantFrom(...PAYER_FIELDS, 'customer', 'order_id', 'sign'), fc.string({ maxLength: 6 }))
    const json = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(key, tie('value'), { maxKeys: 4 })),
    })).value
    fc.assert(
      fc.property(fc.dictionary(key, json, { maxKeys: 6 }), (fields) => {
        const once = redactPayerData(fields)
        expect(isRedacted(once)).toBe(true)
        expect(redactPayerData(once)).toEqual(once)
      }),
    )
  })
})

describe('RedactedPayload codec', () => {
  it('refuses a stored payload with a payer field in clear', () => {
    expect(E.isRight(RedactedPayload.decode({ customer: { merchant_user_id: 'u-1', email: { redacted: true } } }))).toBe(true)
    expect(E.isLeft(RedactedPayload.decode({ customer: { email: 'somchai@example.com' } }))).toBe(true)
    expect(E.isLeft(RedactedPayload.decode({ nested: [{ phone: '0812345678' }] }))).toBe(true)
    expect(E.isLeft(RedactedPayload.decode({ mobile_number: { redacted: true, value: '0898765432' } }))).toBe(true)
  })
})

describe('what counts as a redaction marker', () => {
  it('given payer fields holding a number, a boolean, an empty object or an empty list, when redacted, then each is replaced by a marker', () => {
    // given: values that have no keys of their own, so only their shape tells them from a marker
    const fields = { phone: 812345678, email: true, address: {}, company: [] }
    // when
    const redacted = redactPayerData(fields)
    // then
    expect(redacted).toEqual({ phone: { redacted: true }, email: { redacted: true }, address: { redacted: true }, company: { redacted: true } })
  })
  it('given objects that look like markers but carry more, when redacted, then they are replaced by a real marker', () => {
    // given: a payer value in clear beside redacted and digest, and a digest that is not a text
    const fields = {
      full_name: { redacted: true, digest: 'd1', name: 'Somchai' },
      phone: { redacted: true, digest: 5 },
      email: { redacted: false },
      address: { redacted: true, digest: 'd2' },
    }
    // when
    const redacted = redactPayerData(fields)
    // then: only the last one is a marker already, and it is kept as it is
    expect(redacted).toEqual({ full_name: { redacted: true }, phone: { redacted: true }, email: { redacted: true }, address: { redacted: true, digest: 'd2' } })
  })
  it('given a stored payload whose customer has an unlisted field in clear, when checked, then it is refused', () => {
    // given/when/then: inside `customer`, a field not kept in clear must be a marker
    expect([
      isRedacted({ customer: { nickname: 'Chai' } }),
      isRedacted({ customer: { nickname: { redacted: true }, merchant_user_id: 'u-1' } }),
      isRedacted({ phone: 812345678 }),
      isRedacted({ phone: {} }),
      isRedacted({ phone: { redacted: true, digest: 'd', name: 'x' } }),
    ]).toEqual([false, true, false, false, false])
  })
})
