import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { parsePaymentRequest } from '../../../src/application/payments.ts'
import { MERCHANT_ID } from '../../application/support.ts'
import { readmeExampleBodies } from '../../support/readme-examples.ts'

// recording.int.test.ts sends the same bodies to the sandbox over real HTTP.
describe('docs/merchant-api.md example bodies', () => {
  const bodies = readmeExampleBodies()

  it('docs/merchant-api.md shows a body for POST /v1/payments (direct Thai QR) and POST /v1/checkouts', () => {
    expect([...bodies.keys()].sort()).toEqual(['POST /v1/checkouts', 'POST /v1/payments'])
    expect(bodies.get('POST /v1/payments')).toMatchObject({ service: 'svc.thaiqr.pay', payment_method: 'THAI_QR' })
  })

  it.each([
    ['POST /v1/payments', 'direct'],
    ['POST /v1/checkouts', 'checkout'],
  ] as const)('%s: the API codec accepts the body as documented', (route, operation) => {
    const parsed = parsePaymentRequest(operation, bodies.get(route), MERCHANT_ID)
    expect(E.isLeft(parsed) ? parsed.left : []).toEqual([])
  })
})
