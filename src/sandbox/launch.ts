import type { KeyObject } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Canonicalizer } from '../domain/gateway/canonical.ts'
import type { Logger } from '../logger.ts'
import { loadOrCreateGatewayKey, type GatewayKeys } from './keys.ts'
import type { RateLimit } from './rate-limit.ts'
import { makeSandbox, type Sandbox } from './sandbox.ts'
import type { SandboxSettings } from './context.ts'
import { loadStateFile } from './state-file.ts'

/** What a sandbox needs to start as a product of its own: `satang sandbox`, or the ledger's built-in gateway. */
export type SandboxLaunch = {
  readonly log: Logger
  readonly host: string
  /** 0: any free port. */
  readonly port: number
  readonly merchants: ReadonlyMap<string, KeyObject>
  /** The gateway's signing key file; without it, `<dataDir>/gateway-private.pem` (generated when absent). */
  readonly gatewayPrivateKeyFile?: string
  readonly dataDir: string
  /** Keep the state in this file and its journal. */
  readonly statePath?: string
  readonly canonicalizer?: Canonicalizer
  readonly rateLimit?: RateLimit
  readonly settings?: Partial<SandboxSettings>
  readonly publicUrl?: string
}

/** Why a sandbox did not start; `setting` names what to change. */
export type LaunchFailure = {
  readonly _tag: 'LaunchFailure'
  readonly setting: 'gatewayPrivateKeyFile' | 'dataDir' | 'statePath' | 'listen'
  readonly message: string
  /** For `listen`: the system error code (`EADDRINUSE`, `EACCES`, …). */
  readonly code?: string
}

export type Launched = { readonly sandbox: Sandbox; readonly keys: GatewayKeys }

const errorCode = (e: unknown): string | undefined => (e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined)

/** The sandbox's entry point: its key and state checked, then the server listening. */
export const launchSandbox = async (o: SandboxLaunch): Promise<E.Either<LaunchFailure, Launched>> => {
  if (o.statePath !== undefined) {
    const loaded = await loadStateFile(o.statePath)
    if (E.isLeft(loaded)) return E.left({ _tag: 'LaunchFailure', setting: 'statePath', message: loaded.left })
  }
  const keys = await loadOrCreateGatewayKey(o.gatewayPrivateKeyFile, o.dataDir)
  if (E.isLeft(keys)) return E.left({ _tag: 'LaunchFailure', setting: o.gatewayPrivateKeyFile === undefined ? 'dataDir' : 'gatewayPrivateKeyFile', message: keys.left })
  try {
    const sandbox = await makeSandbox(
      { log: o.log },
      {
        host: o.host,
        port: o.port,
        merchants: o.merchants,
        gatewayPrivateKey: keys.right.privateKey,
        ...(o.canonicalizer === undefined ? {} : { canonicalizer: o.canonicalizer }),
        ...(o.rateLimit === undefined ? {} : { rateLimit: o.rateLimit }),
        ...(o.settings === undefined ? {} : { settings: o.settings }),
        ...(o.publicUrl === undefined ? {} : { publicUrl: o.publicUrl }),
        ...(o.statePath === undefined ? {} : { statePath: o.statePath }),
      },
    )
    return E.right({ sandbox, keys: keys.right })
  } catch (e) {
    const code = errorCode(e)
    const why = code === 'EADDRINUSE' ? 'the address is in use' : code === 'EACCES' ? 'permission denied' : e instanceof Error ? e.message : String(e)
    return E.left({ _tag: 'LaunchFailure', setting: 'listen', message: `cannot listen on ${o.host}:${String(o.port)}: ${why}`, ...(code === undefined ? {} : { code }) })
  }
}
