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
