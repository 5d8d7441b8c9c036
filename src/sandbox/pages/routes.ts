import * as E from 'fp-ts/lib/Either.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import * as t from 'io-ts'
import { notFound } from '../action-error.ts'
import { authoriseSubscription } from '../billing.ts'
import type { SandboxContext } from '../context.ts'
import { failOrder, payOrder } from '../payments.ts'
import type { SandboxOrder } from '../state.ts'
import { messagePage, redirectFormPage } from './html.ts'
import { checkoutPage, failed, isExpired, ok, parseChoice, payPage, resultPage, type PageReply } from './order-pages.ts'
import { subscriptionPage } from './subscription-page.ts'

type IdParams = { readonly id: string }

const send = (reply: FastifyReply, r: PageReply): FastifyReply =>
  'location' in r
    ? reply.code(303).header('location', r.location).send()
    : reply.code(r.status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(r.body)

const orderOfKind = (ctx: SandboxContext, id: string, kind: SandboxOrder['kind']): E.Either<PageReply, SandboxOrder> => {
  const o = ctx.store.order(id)
  return o === undefined || o.kind !== kind ? E.left(failed(notFound(`There is no ${kind === 'checkout' ? 'checkout' : 'payment'} ${id}.`))) : E.right(o)
}

const fieldOf = (body: unknown, name: string): unknown => (t.UnknownRecord.is(body) ? body[name] : undefined)

/** The payer's pages: `/pay/:id` (direct payment links), `/checkout/:id` (hosted checkout), `/subscriptions/:id`. */
export const registerPageRoutes = (app: FastifyInstance, ctx: SandboxContext): void => {
  const withOrder =
    (kind: SandboxOrder['kind'], run: (o: SandboxOrder, request: FastifyRequest<{ Params: IdParams }>) => PageReply | Promise<PageReply>) =>
    async (request: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply): Promise<FastifyReply> => {
      const o = orderOfKind(ctx, request.params.id, kind)
      return send(reply, E.isLeft(o) ? o.left : await run(o.right, request))
    }

  app.get<{ Params: IdParams }>('/pay/:id', withOrder('direct', (o) => payPage(ctx, o)))
  app.post<{ Params: IdParams }>(
    '/pay/:id/pay',
    withOrder('direct', (o) => {
      if (isExpired(ctx, o)) return { status: 410, body: messagePage('Link expired', `The payment link of order ${o.merchantOrderId} has expired.`) }
      const paid = payOrder(ctx, o.orderId)
      return E.isLeft(paid) ? failed(paid.left) : resultPage(ctx, paid.right)
    }),
  )
  app.post<{ Params: IdParams }>(
    '/pay/:id/fail',
    withOrder('direct', (o) => {
      const f = failOrder(ctx, o.orderId)
      return E.isLeft(f) ? failed(f.left) : resultPage(ctx, f.right)
    }),
  )

  app.get<{ Params: IdParams }>(
    '/checkout/:id',
    withOrder('checkout', (o, request) => {
      // "cancel_url … Default: the referer URL": the page that sent the payer here, on the first visit.
      const referer = request.headers.referer
      if (o.referer === undefined && typeof referer === 'string' && referer !== '') ctx.store.putOrder({ ...o, referer })
      return checkoutPage(ctx, o)
    }),
  )
  app.post<{ Params: IdParams }>(
    '/checkout/:id/pay',
    withOrder('checkout', (o, request) => {
      const choice = parseChoice(o, fieldOf(request.body, 'method'))
      if (choice === undefined) return { status: 400, body: messagePage('Choose a method', 'That payment method is not offered for this order.') }
      const paid = payOrder(ctx, o.orderId, choice)
      return E.isLeft(paid) ? failed(paid.left) : resultPage(ctx, paid.right)
    }),
  )
  app.post<{ Params: IdParams }>(
    '/checkout/:id/cancel',
    withOrder('checkout', (o) => {
      const target = o.cancelUrl ?? o.referer
      return target === undefined ? ok(messagePage('Payment cancelled', `You cancelled order ${o.merchantOrderId}. You may close this page.`)) : { status: 303, location: target }
    }),
  )

  app.get<{ Params: IdParams }>('/subscriptions/:id', async (request, reply) => {
    const s = ctx.store.subscription(request.params.id)
    return send(reply, s === undefined ? failed(notFound(`There is no subscription ${request.params.id}.`)) : subscriptionPage(s))
  })
  app.post<{ Params: IdParams }>('/subscriptions/:id/authorise', async (request, reply) => {
    const result = authoriseSubscription(ctx, request.params.id)
    if (E.isLeft(result)) return send(reply, failed(result.left))
    const { subscription: s, redirect } = result.right
    const title = s.status === 'SUSPEND' ? 'Subscription suspended' : 'Subscription authorised'
    return send(
      reply,
      redirect === undefined
        ? ok(messagePage(title, `Subscription ${s.merchantSubscribeId}: ${s.billingAmount} ${s.billingCurrency} per cycle. You may close this page.`))
        : ok(redirectFormPage(title, redirect.url, redirect.fields)),
    )
  })
}
