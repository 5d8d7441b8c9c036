import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { crc16Ccitt, parseEmvTlv, parsePromptPayId, qrDataUrl, thaiQrPayload, verifyThaiQr } from '../../src/sandbox/thai-qr.ts'
import { formatAmount, MAX_SATANG, type Satang } from '../../src/domain/money.ts'

const baht = (s: bigint): Satang => s as Satang

// Payloads written by other Thai QR implementations (not promptpay-qr): a phone-number PromptPay with
// an amount, and a bill payment with merchant name and reference data.
const THIRD_PARTY_PHONE = '00020101021129370016A000000677010111011300668123456785204000053037645406100.505802TH6304ACCB'
const THIRD_PARTY_BILL =
  '000201010212304701151423461990019930210REFERENCE10310REFERENCE25204701153037645406100.005802TH5907PPETECH6007BANGKOK62380523202106250425429530000000707SRU123563043AEF'

const tagValue = (payload: string, tag: string): string | undefined => {
  const fields = parseEmvTlv(payload)
  return E.isRight(fields) ? fields.right.find((f) => f.tag === tag)?.value : undefined
}

describe('crc16Ccitt (EMVCo tag 63: poly 0x1021, init 0xFFFF)', () => {
  it('gives the standard check value for "123456789"', () => {
    expect(crc16Ccitt('123456789')).toBe('29B1')
  })
  it('agrees with the CRCs that other implementations wrote', () => {
    for (const p of [THIRD_PARTY_PHONE, THIRD_PARTY_BILL]) expect(crc16Ccitt(p.slice(0, -4))).toBe(p.slice(-4))
  })
  it('pads to 4 uppercase hex digits', () => {
    expect(crc16Ccitt('')).toBe('FFFF')
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(crc16Ccitt(s)).toMatch(/^[0-9A-F]{4}$/)
      }),
    )
  })
})

describe('thaiQrPayload', () => {
  it('a phone-number PromptPay with an amount: dynamic QR that verifies and carries the amount', () => {
    const payload = thaiQrPayload({ promptPayId: '081-234-5678', amount: baht(12345n) })
    expect(verifyThaiQr(payload, { amount: baht(12345n) })).toEqual(E.right({ amount: '123.45', currency: '764' }))
    expect(tagValue(payload, '01')).toBe('12')
    expect(tagValue(payload, '29')).toBe('0016A00000067701011101130066812345678')
    expect(payload.slice(0, -4)).toBe('00020101021229370016A000000677010111011300668123456785802TH53037645406123.456304')
  })
  it('a 13-digit national or tax id is the proxy under sub-tag 02', () => {
    const payload = thaiQrPayload({ promptPayId: '1234567890123', amount: baht(100n) })
    expect(tagValue(payload, '29')).toBe('0016A00000067701011102131234567890123')
    expect(E.isRight(verifyThaiQr(payload))).toBe(true)
  })
  it('tag 54 equals formatAmount for every 8,2 amount (promptpay-qr takes a float; we check it)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: MAX_SATANG }), (s) => {
        const payload = thaiQrPayload({ promptPayId: '0812345678', amount: baht(s) })
        expect(tagValue(payload, '54')).toBe(formatAmount(s))
        expect(E.isRight(verifyThaiQr(payload, { amount: baht(s) }))).toBe(true)
      }),
    )
  })
  it('amount 0 gives a static QR without an amount', () => {
    const payload = thaiQrPayload({ promptPayId: '0812345678', amount: baht(0n) })
    expect(tagValue(payload, '01')).toBe('11')
    expect(verifyThaiQr(payload)).toEqual(E.right({ currency: '764' }))
  })
  it('refuses a PromptPay id that is not a phone number, 13-digit or 15-digit id', () => {
    expect(() => thaiQrPayload({ promptPayId: '12345', amount: baht(100n) })).toThrow('PromptPay id must be a phone number')
    expect(parsePromptPayId('0812345678')).toEqual(E.right('0812345678'))
    expect(E.isLeft(parsePromptPayId('8123456789'))).toBe(true)
  })
})

describe('verifyThaiQr', () => {
  const good = thaiQrPayload({ promptPayId: '0812345678', amount: baht(50000n) })

  it('accepts a third-party PromptPay payload', () => {
    expect(verifyThaiQr(THIRD_PARTY_PHONE, { amount: baht(10050n) })).toEqual(E.right({ amount: '100.50', currency: '764' }))
  })
  it('tampering one digit of the amount breaks the CRC', () => {
    const tampered = good.replace('500.00', '900.00')
    expect(verifyThaiQr(tampered)).toEqual(E.left(expect.stringContaining('CRC mismatch: tag 63 says')))
  })
  it('tampering a digit anywhere is caught', () => {
    fc.assert(
      fc.property(fc.nat({ max: good.length - 5 }), fc.integer({ min: 1, max: 9 }), (i, bump) => {
        const c = good[i] ?? ''
        fc.pre(/\d/.test(c))
        const tampered = good.slice(0, i) + String((Number(c) + bump) % 10) + good.slice(i + 1)
        expect(E.isLeft(verifyThaiQr(tampered))).toBe(true)
      }),
    )
  })
  it('an amount other than the expected one is reported', () => {
    expect(verifyThaiQr(good, { amount: baht(49999n) })).toEqual(E.left('amount (tag 54) is 500.00; expected 499.99'))
    const noAmount = thaiQrPayload({ promptPayId: '0812345678', amount: baht(0n) })
    expect(verifyThaiQr(noAmount, { amount: baht(100n) })).toEqual(E.left('amount (tag 54) is missing; expected 1.00'))
  })
  it('checks the format indicator, the currency and the position of the CRC', () => {
    const resign = (body: string): string => `${body}6304${crc16Ccitt(`${body}6304`)}`
    const body = good.slice(0, -8)
    expect(E.isRight(verifyThaiQr(resign(body)))).toBe(true)
    expect(verifyThaiQr(resign(body.replace('5303764', '5303840')))).toEqual(E.left('currency (tag 53) must be 764 (THB), got 840'))
    expect(verifyThaiQr(resign(body.replace(/^000201/, '000202')))).toEqual(E.left('must start with the payload format indicator 000201 (tag 00 = 01)'))
    expect(verifyThaiQr(`${good}5802TH`)).toEqual(E.left(expect.stringContaining('must end with the CRC')))
  })
  it('reports malformed TLV with its position', () => {
    expect(parseEmvTlv('')).toEqual(E.left('payload is empty'))
    expect(parseEmvTlv('000201010')).toEqual(E.left('at character 6: expected a 2-digit tag and a 2-digit length, got "010"'))
    expect(parseEmvTlv('00020101051')).toEqual(E.left('tag 01 at character 6: declares 5 characters but only 1 remain'))
    expect(parseEmvTlv('0002010100')).toEqual(E.right([{ tag: '00', value: '01' }, { tag: '01', value: '' }]))
  })
})

describe('qrDataUrl', () => {
  it('renders the payload as a PNG data URL', async () => {
    const url = await qrDataUrl(thaiQrPayload({ promptPayId: '0812345678', amount: baht(100n) }))
    expect(url).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/)
    const png = Buffer.from(url.slice('data:image/png;base64,'.length), 'base64')
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG')
  })
})
