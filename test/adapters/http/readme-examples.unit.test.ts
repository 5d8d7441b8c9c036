import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { parsePaymentRequest } from '../../../src/application/payments.ts'
import { SUBSCRIPTION_CREATE_SERVICE } from '../../../src/domain/gateway/services.ts'
import { SubscriptionCreateRequest } from '../../../src/domain/gateway/subscription.ts'
import { decodeAll } from '../../../src/domain/violations.ts'
import { MERCHANT_ID } from '../../application/support.ts'
import { readmeExampleBodies } from '../../support/readme-examples.ts'

// recording.int.test.ts sends the same bodies to the sandbox over real HTTP.
describe('docs/merchant-api.md example bodies', () => {
  const bodies = readmeExampleBodies()

  it('docs/merchant-api.md shows a body for POST /v1/payments (direct Thai QR), POST /v1/checkouts and POST /v1/subscriptions', () => {
    expect([...bodies.keys()].sort()).toEqual(['POST /v1/checkouts', 'POST /v1/payments', 'POST /v1/subscriptions'])
    expect(bodies.get('POST /v1/payments')).toMatchObject({ service: 'svc.thaiqr.pay', payment_method: 'THAI_QR' })
  })

  it.each([
    ['POST /v1/payments', 'direct'],
    ['POST /v1/checkouts', 'checkout'],
  ] as const)('%s: the API codec accepts the body as documented', (route, operation) => {
    const parsed = parsePaymentRequest(operation, bodies.get(route), MERCHANT_ID)
    expect(E.isLeft(parsed) ? parsed.left : []).toEqual([])
  })

  it('POST /v1/subscriptions: the gateway codec of endpoint 6 accepts the body as the API completes it (version, service, merchant_id)', () => {
    const parsed = decodeAll(SubscriptionCreateRequest, { version: 'v1', service: SUBSCRIPTION_CREATE_SERVICE, ...bodies.get('POST /v1/subscriptions'), merchant_id: MERCHANT_ID })
    expect(E.isLeft(parsed) ? parsed.left : []).toEqual([])
  })
})
