import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { makeLogger } from '../../src/logger.ts'

const capture = (): { stream: Writable; lines: () => string } => {
  let out = ''
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out += chunk.toString('utf8')
      cb()
    },
  })
  return { stream, lines: () => out }
}

describe('logger redaction', () => {
  it('never writes signatures, keys, tokens or payer personal data; ids stay', () => {
    const { stream, lines } = capture()
    const log = makeLogger({ level: 'info' }, stream).child({ component: 'test' })
    log.info(
      {
        request: {
          merchant_order_id: 'ORD-1',
          sign: 'SIGNATURE-TEXT',
          customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee', phone: '0812345678', email: 'a@b.c', id_no: '1234567890123', address: { city: 'Bangkok' } },
          mobile_number: '0899999999',
        },
        headers: { authorization: 'Bearer tok-123' },
        privateKey: 'PEM-PRIVATE',
      },
      'sent',
    )
    log.error({ err: { request: { customer: { full_name: 'Deep Nested' }, sign: 'DEEP-SIG' } } }, 'failed')
    const text = lines()
    for (const secret of ['SIGNATURE-TEXT', 'Somchai', '0812345678', 'a@b.c', '1234567890123', 'Bangkok', '0899999999', 'tok-123', 'PEM-PRIVATE', 'Deep Nested', 'DEEP-SIG']) {
      expect(text).not.toContain(secret)
    }
    expect(text).toContain('ORD-1')
    expect(text).toContain('u-1')
    expect(text).toContain('"component":"test"')
  })
})
