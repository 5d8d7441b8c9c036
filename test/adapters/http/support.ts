import { Pool } from 'pg'
import { registerLedgerRoutes } from '../../../src/adapters/http/ledger-routes.ts'
import type { FastifyInstance } from 'fastify'
import { makeTokenMatcher, type ApiToken } from '../../../src/adapters/http/api-tokens.ts'
import { registerCallbackRoutes } from '../../../src/adapters/http/callback-routes.ts'
import { makeHttpServer, makeMetricsRegistry } from '../../../src/adapters/http/server.ts'
import { registerReconciliationRoutes } from '../../../src/adapters/http/reconciliation-routes.ts'
import { registerV1Routes } from '../../../src/adapters/http/v1-routes.ts'
import type { RecordingDeps } from '../../../src/application/deps.ts'
import { makeRecording, type Recording } from '../../../src/application/index.ts'
import { silentLogger, type Logger } from '../../../src/logger.ts'
import { makeMemoryEventStore, type MemoryEventStore } from '../../application/memory-event-store.ts'
import { makeFakeGateway, testDeps, type FakeGateway } from '../../application/support.ts'

/** Tokens of the HTTP tests: one per scope, and one with all three. */
export const TOKENS: ReadonlyArray<ApiToken> = [
  { name: 'writer', token: 'writer-token-0123456789', scopes: ['payments:write'] },
  { name: 'reader', token: 'reader-token-0123456789', scopes: ['read'] },
  { name: 'auditor', token: 'auditor-token-012345678', scopes: ['audit'] },
  { name: 'all', token: 'all-scopes-token-0123456', scopes: ['payments:write', 'read', 'audit'] },
  { name: 'finance', token: 'finance-token-012345678', scopes: ['read', 'reconcile:write'] },
]

export const bearer = (name: 'writer' | 'reader' | 'auditor' | 'all' | 'finance'): Record<string, string> => ({ authorization: `Bearer ${TOKENS.find((t) => t.name === name)?.token ?? ''}` })

export type TestApi = { readonly app: FastifyInstance; readonly store: MemoryEventStore; readonly gateway: FakeGateway; readonly recording: Recording }

/**
 * The HTTP service with /v1 and /callbacks over an in-memory store and a scripted gateway (fastify
 * `inject`, no sockets); `log` is the HTTP server's logger.
 */
export const makeTestApi = (over: Partial<RecordingDeps> = {}, log: Logger = silentLogger()): TestApi => {
  const store = makeMemoryEventStore()
  const gateway = makeFakeGateway()
  const deps = testDeps(store, gateway, over)
  const recording = makeRecording(deps)
  const app = makeHttpServer({
    log,
    version: 'test',
    metrics: makeMetricsRegistry(),
    checks: [],
    routes: [
      registerV1Routes({ recording, tokens: makeTokenMatcher(TOKENS) }),
      // No database here: the ledger routes are mounted for the API's shape (OpenAPI, auth) and answer 503.
      registerLedgerRoutes({ readModels: { pool: new Pool({ host: '127.0.0.1', port: 9, connectionTimeoutMillis: 200 }), schema: 'satang' }, tokens: makeTokenMatcher(TOKENS) }),
      registerReconciliationRoutes({
        readModels: { pool: new Pool({ host: '127.0.0.1', port: 9, connectionTimeoutMillis: 200 }), schema: 'satang' },
        merchantId: deps.merchantId,
        tokens: makeTokenMatcher(TOKENS),
        acknowledge: async (breakId, actor, reason) => ({ _tag: 'Ok', status: 'ok', body: { break_id: breakId, acknowledged_by: actor, reason } }),
      }),
      registerCallbackRoutes({ callbacks: recording.callbacks, now: deps.now }),
    ],
  })
  return { app, store, gateway, recording }
}
