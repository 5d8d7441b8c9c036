import type { Cause } from '../../../application/deps.ts'
import type { ConsoleAccounts, PasswordHasher } from '../../../application/ports/console-accounts.ts'
import type { AccountThrottlePolicy } from '../../../domain/console-users/account-throttle.ts'
import type { EventStore } from '../../../application/ports/event-store.ts'
import type { UseCaseResult } from '../../../application/results.ts'
import type { ReadModels } from '../../../projections/types.ts'
import type { ApiToken } from '../api-tokens.ts'
import type { OpenIdSettings } from './openid.ts'
import type { Sessions } from './session.ts'

/** What the console reads and the one thing it does (acknowledge a break). */
export type ConsoleDeps = {
  readonly readModels: ReadModels
  readonly store: EventStore
  readonly merchantId: string
  readonly tokens: ReadonlyArray<ApiToken>
  /** The installation's session secret (SATANG_SESSION_SECRET_FILE, else SATANG_DATA_DIR/session-secret): signs console sessions. */
  readonly sessionSecret: Buffer
  readonly acknowledge: (breakId: string, actor: string, reason: string, cause: Cause) => Promise<UseCaseResult>
  readonly now: () => Date
  /** The configured Kafka topic (SATANG_KAFKA_TOPIC), shown as never run when no relay ever ran against the database; the lag table shows every relay the database knows. */
  readonly relayTopic: string
  /** People who sign in as themselves: console accounts (`satang users`), and an OpenID Connect provider when configured. */
  readonly people?: {
    readonly accounts: ConsoleAccounts
    readonly hasher: PasswordHasher
    readonly policy?: AccountThrottlePolicy
    readonly openid: OpenIdSettings | null
  }
}

export type ConsoleContext = ConsoleDeps & { readonly sessions: Sessions }
