import { describe, expect, it } from 'vitest'
import * as E from 'fp-ts/lib/Either.js'
import { decodeConfig, formatConfigErrors, type Config } from '../../src/config.ts'
import { classifyPaymentStatus, classifyRefundStatus } from '../../src/domain/gateway/statuses.ts'
import { StartupError, statusTables } from '../../src/main.ts'

const configOf = (env: Record<string, string>): Config => {
  const c = decodeConfig(env)
  if (E.isLeft(c)) throw new Error(formatConfigErrors(c.left))
  return c.right
}
const realGateway = { SATANG_GATEWAY_BASE_URL: 'https://gw.example', SATANG_MERCHANT_ID: '140000000000000001', SATANG_MERCHANT_PRIVATE_KEY_FILE: 'k.pem', SATANG_GATEWAY_PUBLIC_KEY_FILE: 'g.pem' }

describe('configurable status tables', () => {
  it("with the built-in sandbox, its failed status PF is final and failed; unknown codes still need review", () => {
    const tables = statusTables(configOf({}))
    expect(classifyPaymentStatus(tables.payment, 'PF')).toMatchObject({ outcome: 'failed', final: true, needsReview: false })
    expect(classifyPaymentStatus(tables.payment, 'PS')).toMatchObject({ outcome: 'succeeded', final: true })
    expect(classifyPaymentStatus(tables.payment, 'ZZ')).toMatchObject({ final: false, needsReview: true })
  })

  it('with a real gateway, PF is unknown unless configured; configured codes are used', () => {
    expect(classifyPaymentStatus(statusTables(configOf(realGateway)).payment, 'PF')).toMatchObject({ needsReview: true })
    const tables = statusTables(
      configOf({
        ...realGateway,
        SATANG_PAYMENT_STATUSES: '{"PC":{"meaning":"closed by the gateway","outcome":"failed"},"PP":{"meaning":"processing","outcome":"pending"}}',
        SATANG_REFUND_STATUSES: '{"RF":{"meaning":"refund failed","outcome":"failed"}}',
      }),
    )
    expect(classifyPaymentStatus(tables.payment, 'PC')).toMatchObject({ meaning: 'closed by the gateway', final: true, needsReview: false })
    expect(classifyPaymentStatus(tables.payment, 'PP')).toMatchObject({ final: false, needsReview: false })
    expect(classifyRefundStatus(tables.refund, 'RF')).toMatchObject({ outcome: 'failed', final: true })
  })

  it('a table that is not JSON, or breaks the entry rules, names the variable and every rule', () => {
    const notJson = decodeConfig({ SATANG_PAYMENT_STATUSES: '{PF:failed}' })
    expect(E.isLeft(notJson) && formatConfigErrors(notJson.left)).toContain('SATANG_PAYMENT_STATUSES (environment): must be a JSON object of status codes')
    const bad = decodeConfig({ SATANG_REFUND_STATUSES: '{"RFX":{"meaning":"x","outcome":"failed"},"RA":{"meaning":"y","outcome":"done"}}' })
    const text = E.isLeft(bad) ? formatConfigErrors(bad.left) : ''
    expect(text).toContain('RFX: must be a 2-character status code such as WP or PS')
    expect(text).toContain('RA.outcome')
  })

  it("the spec's codes cannot be redefined: start-up stops naming each", () => {
    const config = configOf({ SATANG_PAYMENT_STATUSES: '{"PS":{"meaning":"pending","outcome":"pending"}}', SATANG_REFUND_STATUSES: '{"RS":{"meaning":"no","outcome":"failed"}}' })
    expect(() => statusTables(config)).toThrow(StartupError)
    expect(() => statusTables(config)).toThrow(/SATANG_PAYMENT_STATUSES: status PS is defined by the gateway spec[\s\S]*SATANG_REFUND_STATUSES: status RS/)
  })
})
