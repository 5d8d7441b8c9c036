import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PAYMENT_STATUS_TABLE, extendStatusTable } from '../../../src/domain/gateway/statuses.ts'
import { decide, fold, type Order, type OrderCommand, type OrderEvent, type OrderState } from '../../../src/domain/order/index.ts'
import { anAcceptedCheckout, aPaymentNotification, aQueryAnswer, aRedirectForm, notified, queried, redirected } from './builders.ts'

const extended = extendStatusTable(DEFAULT_PAYMENT_STATUS_TABLE, { PF: { meaning: 'failed', outcome: 'failed' } })
const table = extended._tag === 'Right' ? extended.right : DEFAULT_PAYMENT_STATUS_TABLE

const observation = fc
  .record({
    via: fc.constantFrom('notification', 'query', 'redirect', 'forged'),
    status: fc.constantFrom('WP', 'PI', 'PS', 'PF', 'ZZ'),
    amount: fc.constantFrom('100.00', '100.00', '100.00', '90.00'),
  })
  .map(({ via, status, amount }): OrderCommand => {
    const fields = { order_status: status, order_amount: amount }
    switch (via) {
      case 'notification':
        return notified(aPaymentNotification(fields), { statusTable: table })
      case 'query':
        return queried(aQueryAnswer(fields), { statusTable: table })
      case 'redirect':
        return redirected(aRedirectForm(fields))
      case 'forged':
        return notified(aPaymentNotification(fields), { verified: false, statusTable: table })
    }
  })

const order = (s: OrderState): Order => {
  if (s._tag !== 'Order') throw new Error('expected an order')
  return s
}

describe('order invariants over any sequence of callbacks and queries (property)', () => {
  it('a final status never changes once applied; a command decided twice records nothing the second time', () => {
    fc.assert(
      fc.property(fc.array(observation, { maxLength: 12 }), (commands) => {
        const events: OrderEvent[] = [...anAcceptedCheckout()]
        let finalCode: string | null = null
        for (const command of commands) {
          const decided = decide(command, fold(events))
          if (decided._tag === 'Left') throw new Error(`rejected: ${decided.left._tag}`)
          events.push(...decided.right)
          const s = order(fold(events))
          if (finalCode !== null) expect(s.status?.code).toBe(finalCode)
          else if (s.status?.classification.final === true) finalCode = s.status.code
          // A forged callback excepted (each delivery attempt is kept), the same command again decides nothing.
          const again = decide(command, s)
          if (!('signature' in command) || command.signature.verified) expect(again).toEqual({ _tag: 'Right', right: [] })
        }
        // Only authority pays: a redirect alone never does, nor an observation with the wrong amount.
        const s = order(fold(events))
        if (s.status?.code === 'PS') expect(events.some((e) => e.type === 'StatusObserved' && e.data.statusCode === 'PS' && e.data.amount === 10000n)).toBe(true)
      }),
    )
  })
})
