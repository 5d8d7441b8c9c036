import { describe, expect, it } from 'vitest'
import { AmountText } from '../../../src/domain/money.ts'
import { ChargeAmount, Currency, IpAddress, MerchantId, RequestCurrency, SubscriptionMerchantId } from '../../../src/domain/gateway/fields.ts'
import { absentable, lengthOf, oneOf, text } from '../../../src/domain/gateway/text-codecs.ts'
import { violations } from './builders.ts'

describe('field codecs', () => {
  it('counts length in Unicode code points', () => {
    expect(lengthOf('กข')).toBe(2)
    expect(lengthOf('😀')).toBe(1)
    expect(violations(text('x', 2), '😀😀')).toEqual([])
    expect(violations(text('x', 2), '😀😀😀')).toEqual([{ path: '', rule: 'must be at most 2 characters' }])
  })
  it('separates missing, wrong type and empty', () => {
    expect(violations(text('x', 5), undefined)).toEqual([{ path: '', rule: 'is required' }])
    expect(violations(text('x', 5), 5)).toEqual([{ path: '', rule: 'must be a string' }])
    expect(violations(text('x', 5), '')).toEqual([{ path: '', rule: 'must not be empty' }])
  })
  it('lists the allowed values of an enumeration', () => {
    expect(violations(oneOf('x', ['A']), 'B')).toEqual([{ path: '', rule: 'must be A' }])
    expect(violations(oneOf('x', ['A', 'B', 'C']), 'D')).toEqual([{ path: '', rule: 'must be A, B or C' }])
  })
  it('absentable accepts null and "" but checks anything else', () => {
    expect(violations(absentable(MerchantId), null)).toEqual([])
    expect(violations(absentable(MerchantId), '')).toEqual([])
    expect(violations(absentable(MerchantId), '1')).toEqual([{ path: '', rule: 'must be 18 digits starting with 14' }])
  })
  it.each(['203.0.113.7', '0.0.0.0', '255.255.255.255', '2001:db8::1', '::1', '::', 'fe80:0:0:0:0:0:0:1', '::ffff:192.0.2.1', '2001:DB8:0:0:8:800:200C:417A', '1:2:3:4:5:6:192.0.2.1'])(
    'IpAddress accepts %s',
    (ip) => expect(violations(IpAddress, ip)).toEqual([]),
  )
  it.each(['256.1.1.1', '1.2.3', '01.2.3.4', 'localhost', '2001:db8:::1', '1:2:3:4:5:6:7:8:9', '1::2:3:4:5:6:7:8', 'fe80::1%eth0', ' 1.2.3.4', '1:2:3::4:5::6:7:8', '::ffff:256.0.2.1', '1:2:3:4:5:6:7:192.0.2.1'])(
    'IpAddress rejects %s',
    (ip) => expect(violations(IpAddress, ip)).toEqual([{ path: '', rule: 'must be an IPv4 or IPv6 address such as 203.0.113.7' }]),
  )
  it('satang asks for THB only; what the gateway sends may name another currency (then it is a discrepancy, not undecodable)', () => {
    expect(violations(RequestCurrency, 'THB')).toEqual([])
    for (const other of ['USD', 'thb', 'THBX']) expect(violations(RequestCurrency, other)).toEqual([{ path: '', rule: 'must be THB (the only currency the gateway uses)' }])
    expect(violations(Currency, 'USD')).toEqual([])
  })
  it('a create amount is more than zero and keeps every rule of the 8,2 grammar; an observed amount may be zero', () => {
    for (const zero of ['0', '0.0', '0.00']) {
      expect(violations(ChargeAmount, zero)).toEqual([{ path: '', rule: 'must be more than 0' }])
      expect(violations(AmountText, zero)).toEqual([])
    }
    for (const same of ['100', '100.0', '100.00', '0.01', '999999.99']) expect(violations(ChargeAmount, same)).toEqual([])
    expect(violations(ChargeAmount, '1.005')).toEqual([{ path: '', rule: 'must have at most two decimals (8,2)' }])
    expect(violations(ChargeAmount, '-1')).toEqual([{ path: '', rule: 'must not be negative' }])
    expect(violations(ChargeAmount, '1000000')).toEqual([{ path: '', rule: 'must have at most 6 digits before the decimal point (8,2)' }])
  })
  it('merchant ids: 18 digits on payments, 18 to 20 on subscriptions, always starting with 14', () => {
    expect(violations(MerchantId, '140000000000000001')).toEqual([])
    expect(violations(SubscriptionMerchantId, '14000000000000000001')).toEqual([])
    expect(violations(SubscriptionMerchantId, '14000000000000001')).toEqual([{ path: '', rule: 'must be 18 to 20 digits starting with 14' }])
  })
})
