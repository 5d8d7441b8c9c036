import { auditLogProjection } from './audit-log/projection.ts'
import { ledgerProjection } from './ledger/projection.ts'
import { ordersProjection } from './orders/projection.ts'
import { reconciliationProjection } from './reconciliation/projection.ts'
import { refundsProjection } from './refunds/projection.ts'
import { subscriptionsProjection } from './subscriptions/projection.ts'
import type { Projection } from './types.ts'

/** The read-model schema satang uses (tables, views, checkpoints, knex_migrations). */
export const READ_MODEL_SCHEMA = 'satang'

/** Every projection satang runs, in migration order. */
export const PROJECTIONS: ReadonlyArray<Projection> = [ordersProjection, ledgerProjection, refundsProjection, subscriptionsProjection, auditLogProjection, reconciliationProjection]

export const projectionNamed = (name: string): Projection | undefined => PROJECTIONS.find((p) => p.name === name)

export { migrateReadModels } from './migrations.ts'
export { makeReadModelQueries } from './queries.ts'
export { startProjector, type Projector } from './projector.ts'
export { rebuildProjection, type RebuildProgress, type RebuildResult } from './rebuild.ts'
export { projectionStatus, type ProjectionStatus } from './status.ts'
export type { Projection, ReadModels } from './types.ts'
