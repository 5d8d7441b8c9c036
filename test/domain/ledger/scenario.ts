import type { DomainEvent } from '../../../src/domain/events/registry.ts'
import type { ProjectedEvent } from '../../../src/projections/types.ts'
import { makeEventFactory } from '../../projections/support.ts'
import { accepted, charged, observed, orderCreated, orderStream, paymentRequested, redirect, refundRecorded, refundStream, subscriptionStream } from './builders.ts'

/*
 * A small log for the ledger's int tests (projection, routes, CLI), across Bangkok midnight:
 * 2026-01-05T16:30Z is 23:30 on 5 January in Bangkok, 2026-01-05T17:30Z is 00:30 on 6 January.
 *
 * Expected ledger: A paid 250.00 (svc.thaiqr.pay, 5 Jan), B paid 100.00 (svc.wallet_a.pay, 6 Jan),
 * C failed then "paid" (never posts), D never created (never posts); refund R-1 of A 40.00 (6 Jan),
 * subscription SUB-1 charged 199.00 (6 Jan), refund R-X of an order never seen 1.00 (channel unknown).
 */
export const BEFORE_MIDNIGHT = new Date('2026-01-05T16:30:00.000Z')
export const AFTER_MIDNIGHT = new Date('2026-01-05T17:30:00.000Z')
export const NEXT_DAY = new Date('2026-01-06T05:00:00.000Z')

/** The log in batches, as a projector might cut it (fresh event ids on each call). */
export const ledgerScenario = (): ReadonlyArray<ReadonlyArray<ProjectedEvent>> => {
  const event = makeEventFactory()
  const order = (id: string, ...events: DomainEvent[]): ProjectedEvent[] => events.map((e) => event(orderStream(id), e))
  return [
    [
      ...order('A', orderCreated('A', { amount: 25000n, service: 'svc.thaiqr.pay' }), paymentRequested(), accepted('A', { amount: 25000n })),
      ...order('B', orderCreated('B', { amount: 10000n, service: 'svc.wallet_a.pay' })),
      ...order('C', orderCreated('C', { amount: 5000n, service: 'svc.thaiqr.pay' }), observed('C', 'PF', { amount: 5000n })),
      ...order('A', redirect('A', 'PS')),
    ],
    [
      // A paid on 5 January (Bangkok) by notification, then again by query: one posting.
      ...order('A', observed('A', 'PS', { amount: 25000n, completeTime: BEFORE_MIDNIGHT, observedAt: BEFORE_MIDNIGHT })),
      ...order('A', observed('A', 'PS', { amount: 25000n, source: 'query', observedAt: NEXT_DAY })),
      ...order('C', observed('C', 'PS', { amount: 5000n, source: 'query' })),
    ],
    [
      // B paid half an hour later: 6 January in Bangkok, still 5 January in UTC.
      ...order('B', observed('B', 'PS', { amount: 10000n, observedAt: AFTER_MIDNIGHT })),
      event(refundStream('R-1'), refundRecorded('R-1', 'A', 4000n, { observedAt: NEXT_DAY })),
      event(subscriptionStream('SUB-1'), charged('2026-01-06', 19900n, { observedAt: NEXT_DAY })),
      event(refundStream('R-X'), refundRecorded('R-X', 'NEVER-SEEN', 100n, { observedAt: NEXT_DAY })),
    ],
    [...order('B', observed('B', 'PS', { amount: 10000n, source: 'query', observedAt: NEXT_DAY })), ...order('D', observed('D', 'PS'))],
  ]
}
