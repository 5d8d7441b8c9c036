import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signedByGateway } from '../../application/support.ts'
import { MERCHANT_ID } from '../../sandbox/support.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../../support/satang-with-sandbox.ts'

/** What the gateway sees of an answer. */
type Answer = { readonly status: number; readonly body: string; readonly contentType: string | null; readonly callbackHeader: string | null }

/** What the store holds: every event, the head, and the order's stream. */
type StoreView = { readonly events: number; readonly head: string | null; readonly orderEvents: ReadonlyArray<string> }

// With the stream cache (the default: the redelivery is answered from it) and without (it reads the stream).
const variants: ReadonlyArray<{ readonly label: string; readonly settings: Readonly<Record<string, string>> }> = [
  { label: 'with the stream cache', settings: {} },
  { label: 'without the stream cache', settings: { SATANG_STREAM_CACHE_SIZE: '0' } },
]

describe.each(variants)('a redelivered PAYMENT notification, $label', ({ settings }) => {
  let t: SatangWithSandbox
  let pool: Pool

  beforeAll(async () => {
    t = await startSatangWithSandbox('redelivery', settings)
    pool = new Pool({ connectionString: t.databaseUrl, max: 2 })
  }, 120_000)
  afterAll(async () => {
    await pool.end()
    await t.stop()
  })

  const checkout = async (merchantOrderId: string): Promise<string> => {
    const r = await t.api('POST', '/v1/checkouts', { merchant_order_id: merchantOrderId, order_amount: '120.00', order_currency: 'THB', order_desc: 'Tea', customer: { merchant_user_id: 'u-1' } })
    expect(r.status).toBe(201)
    return String(r.json['gateway_order_id'])
  }

  const paid = (merchantOrderId: string, orderId: string): string =>
    JSON.stringify(
      signedByGateway({
        notify_type: 'PAYMENT',
        merchant_id: MERCHANT_ID,
        merchant_order_id: merchantOrderId,
        order_id: orderId,
        order_status: 'PS',
        order_amount: '120.00',
        order_currency: 'THB',
        order_desc: 'Tea',
        create_time: '2026-11-21 10:00:00',
        complete_time: '2026-11-21 10:01:00',
      }),
    )

  const deliver = async (body: string): Promise<Answer> => {
    const res = await fetch(`${t.satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    return { status: res.status, body: await res.text(), contentType: res.headers.get('content-type'), callbackHeader: res.headers.get('x-satang-callback') }
  }

  const storeView = async (merchantOrderId: string): Promise<StoreView> => {
    const all = await pool.query<{ n: string; head: string | null }>(`select count(*)::text as n, max(tx_id::text || '-' || position::text) as head from eventstore.events`)
    const order = await pool.query<{ type: string }>(`select type from eventstore.events where stream_name = $1 order by stream_revision`, [`order-${MERCHANT_ID}-${merchantOrderId}`])
    return { events: Number(all.rows[0]?.n ?? '0'), head: all.rows[0]?.head ?? null, orderEvents: order.rows.map((r) => r.type) }
  }

  const cacheCounts = async (): Promise<{ readonly hits: number; readonly misses: number }> => {
    const text = await (await fetch(`${t.satang.httpUrl}/metrics`)).text()
    const value = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
    return { hits: value('satang_stream_cache_hits_total'), misses: value('satang_stream_cache_misses_total') }
  }

  it('appends nothing (the store keeps its count and head) and answers exactly as the first time', async () => {
    const id = `RD-${String(Date.now())}`
    const body = paid(id, await checkout(id))
    const first = await deliver(body)
    expect(first).toEqual({ status: 200, body: 'SUCCESS', contentType: 'text/plain; charset=utf-8', callbackHeader: null })
    const after = await storeView(id)
    expect(after.orderEvents.slice(-2)).toEqual(['NotificationReceived', 'StatusObserved'])
    const counts = await cacheCounts()
    for (let i = 0; i < 3; i++) {
      expect(await deliver(body)).toEqual(first)
      expect(await storeView(id)).toEqual(after)
    }
    // With the cache, each redelivery was answered from it (no read); without, none was.
    const cached = settings['SATANG_STREAM_CACHE_SIZE'] !== '0'
    expect(await cacheCounts()).toEqual(cached ? { hits: counts.hits + 3, misses: counts.misses } : { hits: 0, misses: counts.misses + 3 })
  })

  it('delivered five times at once, it is recorded once and every delivery is acknowledged', async () => {
    const id = `RDC-${String(Date.now())}`
    const body = paid(id, await checkout(id))
    const before = await storeView(id)
    const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(body)))
    for (const a of answers) expect(a).toEqual({ status: 200, body: 'SUCCESS', contentType: 'text/plain; charset=utf-8', callbackHeader: null })
    const after = await storeView(id)
    expect(after.orderEvents).toEqual([...before.orderEvents, 'NotificationReceived', 'StatusObserved'])
    expect(after.events).toBe(before.events + 2)
  })
})
