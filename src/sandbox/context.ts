import { formatBangkokDateTime } from '../domain/bangkok-time.ts'
import type { Logger } from '../logger.ts'
import type { Signer } from '../domain/gateway/signing.ts'
import type { SandboxClock } from './clock.ts'
import type { NotificationKind } from './notifier.ts'
import type { SandboxStore } from './state.ts'

/** Settings the control API may change while the sandbox runs. */
export type SandboxSettings = {
  /** Pay at once the methods that have no payer step (MERCHANT_SCAN, BANKAPP_A/B notification, direct debit). */
  readonly payImmediately: boolean
  /** `qr_code_expire_sec`. */
  readonly qrExpireSec: number
  /** `link_url_expire_sec`; also how far `due_date` is after creation. */
  readonly linkExpireSec: number
  /** The PromptPay id the Thai QR codes pay to. */
  readonly promptPayId: string
  /** The status a failed payment takes (the spec names none; see docs/merchant-api.md "Sandbox behaviour where the spec is silent"). */
  readonly failedStatus: string
}

/** Sends one notification of `kind` (the notifier adds `notify_type`, signs, delivers and retries it). */
export type Notify = (kind: NotificationKind, url: string, fields: Readonly<Record<string, string>>) => void

/** What every part of the sandbox works with. */
export type SandboxContext = {
  readonly store: SandboxStore
  readonly clock: SandboxClock
  /** Signs redirect forms (and responses) with the gateway key. */
  readonly signer: Signer
  readonly notify: Notify
  readonly log: Logger
  /** The base URL of links (`http://127.0.0.1:7070`), known once the server listens. */
  readonly baseUrl: () => string
  readonly settings: () => SandboxSettings
}

/** Sandbox time as an instant and as a gateway timestamp. */
export const nowOf = (ctx: Pick<SandboxContext, 'clock'>): { readonly instant: Date; readonly text: string } => {
  const instant = ctx.clock.now()
  return { instant, text: formatBangkokDateTime(instant) }
}
