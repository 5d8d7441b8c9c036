import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import {
  classifyPaymentStatus,
  classifyRefundStatus,
  DEFAULT_PAYMENT_STATUS_TABLE,
  DEFAULT_REFUND_STATUS_TABLE,
  extendStatusTable,
  StatusTableCodec,
  SubscriptionStatus,
} from '../../../src/domain/gateway/statuses.ts'
import { violations } from './builders.ts'

describe('payment statuses', () => {
  it.each([
    ['WP', 'pending', false],
    ['PI', 'pending', false],
    ['PS', 'succeeded', true],
  ] as const)('%s is %s, final: %s', (code, outcome, final) => {
    expect(classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, code)).toMatchObject({ code, outcome, final, needsReview: false })
  })
  it('keeps an unknown code as observed: non-final and flagged for review', () => {
    expect(classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PF')).toEqual({
      code: 'PF', meaning: 'unknown status code', outcome: 'pending', final: false, needsReview: true,
    })
  })
  it('does not find Object.prototype members as statuses', () => {
    expect(classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'constructor').needsReview).toBe(true)
    expect(classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, '__proto__').needsReview).toBe(true)
  })
  it('classifies other codes by a configured table', () => {
    const extra = { PF: { meaning: 'payment failed', outcome: 'failed' }, PC: { meaning: 'closed', outcome: 'failed' } } as const
    const table = extendStatusTable(DEFAULT_PAYMENT_STATUS_TABLE, extra)
    expect(E.isRight(table) && classifyPaymentStatus(table.right, 'PF')).toEqual({ code: 'PF', meaning: 'payment failed', outcome: 'failed', final: true, needsReview: false })
    expect(E.isRight(table) && classifyPaymentStatus(table.right, 'PS').outcome).toBe('succeeded')
  })
  it('refuses a configuration that redefines a code of the spec', () => {
    expect(extendStatusTable(DEFAULT_PAYMENT_STATUS_TABLE, { PS: { meaning: 'pending', outcome: 'pending' } })).toEqual(
      E.left(['status PS is defined by the gateway spec and cannot be redefined']),
    )
  })
  it('decodes a configured table and rejects keys that are not 2-character codes', () => {
    expect(violations(StatusTableCodec, { PF: { meaning: 'failed', outcome: 'failed' } })).toEqual([])
    expect(violations(StatusTableCodec, { FAILED: { meaning: 'failed', outcome: 'done' } })).toEqual([
      { path: 'FAILED', rule: 'must be a 2-character status code such as WP or PS' },
      { path: 'FAILED.outcome', rule: 'must be pending, succeeded or failed' },
    ])
  })
})

describe('refund statuses', () => {
  it('RS is a final success', () => {
    expect(classifyRefundStatus(DEFAULT_REFUND_STATUS_TABLE, 'RS')).toEqual({ code: 'RS', meaning: 'refund succeeded', outcome: 'succeeded', final: true, needsReview: false })
  })
  it('any other code is non-final and needs review unless configured', () => {
    expect(classifyRefundStatus(DEFAULT_REFUND_STATUS_TABLE, 'RF')).toMatchObject({ final: false, needsReview: true })
    const table = extendStatusTable(DEFAULT_REFUND_STATUS_TABLE, { RF: { meaning: 'refund failed', outcome: 'failed' } })
    expect(E.isRight(table) && classifyRefundStatus(table.right, 'RF')).toMatchObject({ final: true, outcome: 'failed', needsReview: false })
  })
})

describe('subscription statuses', () => {
  it('are CREATED, ACTIVE and SUSPEND', () => {
    for (const s of ['CREATED', 'ACTIVE', 'SUSPEND']) expect(violations(SubscriptionStatus, s)).toEqual([])
    expect(violations(SubscriptionStatus, 'CANCELLED')).toEqual([{ path: '', rule: 'must be CREATED, ACTIVE or SUSPEND' }])
  })
})
