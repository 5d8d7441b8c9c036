import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import type { EventStore } from '../application/ports/event-store.ts'
import type { Database } from '../composition/database.ts'
import type { GatewayConnection } from '../composition/gateway.ts'
import type { Config } from '../config.ts'
import type { HealthCheck } from '../adapters/http/server.ts'
import type { Logger } from '../logger.ts'

/**
 * The parts satang runs, each able to run as its own process (`satang up --role NAME`) and scale on
 * its own: `api` (the merchant API, callbacks and, by default, the built-in sandbox), `projector` (the
 * read models), `relay` (the event log to Kafka) and `scheduler` (the daily reconciliation and sweeps).
 * `all` runs every one in one process: the quick start.
 */
export const ROLES = ['api', 'projector', 'relay', 'scheduler'] as const
export type Role = (typeof ROLES)[number]
export type RoleChoice = Role | 'all'

export const isRoleChoice = (s: string): s is RoleChoice => s === 'all' || (ROLES as ReadonlyArray<string>).includes(s)
export const rolesOf = (choice: RoleChoice): ReadonlyArray<Role> => (choice === 'all' ? ROLES : [choice])

/** What the roles of one process share: its configuration, log, database, event store and metrics. */
export type ProcessContext = {
  readonly config: Config
  readonly log: Logger
  readonly db: Database
  readonly store: EventStore
  readonly metrics: Registry
  /**
   * The gateway (or the built-in sandbox), connected once per process by the first role that asks and
   * shared by the others (the API and the scheduler of `--role all` talk to one sandbox); closed with the process.
   */
  readonly gateway: () => Promise<GatewayConnection>
}

/** A role started in this process. */
export type StartedRole = {
  readonly role: Role
  /** Route groups it serves on the process's HTTP service, beside `/healthz` and `/metrics`. */
  readonly routes: ReadonlyArray<(app: FastifyInstance) => void>
  /** What `/healthz` checks for it, beside the database. */
  readonly checks: ReadonlyArray<HealthCheck>
  /** What `/readyz` checks for it: whether it can do its work now (each failing check is named, with its reason). */
  readonly readiness: ReadonlyArray<HealthCheck>
  /** Told where the HTTP service listens, once it does (the API gives the gateway callback URLs under it). */
  readonly listening: (at: { readonly httpUrl: string; readonly port: number }) => void
  /** Lines for the start-up output, without the `satang: ` prefix. */
  readonly summary: () => ReadonlyArray<string>
  readonly stop: () => Promise<void>
}
