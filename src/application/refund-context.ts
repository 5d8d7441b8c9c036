import * as E from 'fp-ts/lib/Either.js'
import type { ReadAllOptions, ReadItem } from './ports/event-store.ts'
import { decodeDomainEvent, describeEventDecodeError } from '../domain/events/registry.ts'
import { orderStreamName } from '../domain/order/index.ts'
import { refundOrderContext, type RefundOrderContext } from '../domain/refund/index.ts'
import type { RecordingDeps } from './deps.ts'
import { load, orderKind } from './streams.ts'

/**
 * What the order of a refund allows, for the refund aggregate: the order's paid amount (from its
 * stream) and what the order's other refunds already took back. The other refunds are found by a scan
 * of the merchant's refund streams (their RefundRecorded events); a read model will replace the scan.
 */
export const loadRefundOrderContext = async (
  deps: Pick<RecordingDeps, 'store'>,
  merchantId: string,
  merchantOrderId: string,
  refundStream: string,
): Promise<E.Either<string, RefundOrderContext>> => {
  const order = await load(deps, orderKind, orderStreamName(merchantId, merchantOrderId))()
  if (E.isLeft(order)) return E.left(`order stream: ${order.left._tag}`)
  let refundedByOthers = 0n
  let from: ReadAllOptions = {}
  for (;;) {
    const page = await deps.store.readCategory(`refund-${merchantId}-`, { ...from, maxCount: 1000 })()
    if (E.isLeft(page)) return E.left(`refund streams: ${page.left._tag}`)
    for (const item of page.right) {
      if (E.isLeft(item)) continue
      const r = item.right
      if (r.type !== 'RefundRecorded' || r.streamName === refundStream) continue
      const e = decodeDomainEvent(r.type, r.schemaVersion, r.data)
      if (E.isLeft(e)) return E.left(`${r.streamName}@${r.streamRevision.toString()}: ${describeEventDecodeError(e.left)}`)
      if (e.right.type === 'RefundRecorded' && e.right.data.merchantOrderId === merchantOrderId) refundedByOthers += e.right.data.amount
    }
    const end: ReadItem | undefined = page.right[page.right.length - 1]
    if (end === undefined) break
    from = { from: E.isRight(end) ? end.right.position : end.left.position }
  }
  return E.right({ ...refundOrderContext(order.right.state, []), refundedByOthers })
}
