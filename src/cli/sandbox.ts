import type { KeyObject } from 'node:crypto'
import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import { loadPublicKey } from '../domain/gateway/signing.ts'
import { lockSandboxState } from '../composition/sandbox-state-lock.ts'
import { launchSandbox } from '../sandbox/launch.ts'
import { checkMerchantId } from '../sandbox/merchants.ts'
import { DEFAULT_RATE_LIMIT, DEFAULT_SANDBOX_HOST, DEFAULT_SANDBOX_PORT, DEFAULT_SETTINGS } from '../sandbox/sandbox.ts'
import { parsePromptPayId } from '../sandbox/thai-qr.ts'
import { makeLogger } from '../logger.ts'
import { EXIT, UsageError, readTextFile } from './io.ts'
import { READ_LIMITS } from '../adapters/os/bounded-read.ts'

type SandboxOptions = {
  port: string
  host: string
  merchant: string[]
  gatewayPrivateKey?: string
  dataDir: string
  state?: string
  payImmediately?: boolean
  rateLimit: string
  publicUrl?: string
  promptpayId: string
  logLevel: string
  json?: boolean
}

export const DEFAULT_SANDBOX_DATA_DIR = '.satang/sandbox'

const collect = (value: string, previous: string[]): string[] => [...previous, value]

const wholeNumber = (flag: string, text: string, max: number): number => {
  if (!/^\d+$/.test(text) || Number(text) > max) throw new UsageError(`${flag} must be a whole number from 0 to ${String(max)}, got ${JSON.stringify(text)}`)
  return Number(text)
}

const readMerchants = async (specs: ReadonlyArray<string>): Promise<Map<string, KeyObject>> => {
  const merchants = new Map<string, KeyObject>()
  for (const spec of specs) {
    const at = spec.indexOf('=')
    if (at <= 0 || at === spec.length - 1) throw new UsageError(`--merchant must be MERCHANT_ID=PUBLIC_KEY_PEM_FILE, got ${JSON.stringify(spec)}`)
    const id = spec.slice(0, at)
    const file = spec.slice(at + 1)
    const checked = checkMerchantId(id)
    if (E.isLeft(checked)) throw new UsageError(`--merchant: ${checked.left}`)
    if (merchants.has(id)) throw new UsageError(`--merchant ${id} is given twice`)
    const key = loadPublicKey(await readTextFile(file, `public key file of merchant ${id}`, READ_LIMITS.key))
    if (E.isLeft(key)) throw new UsageError(`--merchant ${id}: ${JSON.stringify(file)}: ${key.left.message}`)
    merchants.set(id, key.right)
  }
  return merchants
}

/** The flag behind each setting of the launch, for usage errors. */
const FLAG_OF = { gatewayPrivateKeyFile: '--gateway-private-key', dataDir: '--data-dir', statePath: '--state' } as const

/** Resolves on the first SIGINT or SIGTERM. */
const untilSignal = (): Promise<NodeJS.Signals> =>
  new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve(signal)
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })

/** `satang sandbox`: the gateway emulator, for satang's own tests and for any merchant's code. */
export const registerSandboxCommand = (program: Command, setExitCode: (code: number) => void): void => {
  program
    .command('sandbox')
    .description("run the gateway sandbox: the gateway spec's server side ({url}/gateway), payer pages, and a control API under /_sandbox")
    .option('--port <port>', 'port to listen on (0: any free port)', String(DEFAULT_SANDBOX_PORT))
    .option('--host <host>', 'address to listen on', DEFAULT_SANDBOX_HOST)
    .option('--merchant <id=file>', 'a merchant_id and the PEM file of its RSA public key (repeatable)', collect, [])
    .option('--gateway-private-key <file>', 'PEM file of the gateway RSA private key (default: <data-dir>/gateway-private.pem, generated when absent)')
    .option('--data-dir <dir>', 'folder of the generated gateway key', DEFAULT_SANDBOX_DATA_DIR)
    .option('--state <file>', 'keep the state in this file and <file>.journal (mode 0600): every change is on disk before it is answered; <file>.lock keeps a second sandbox off it')
    .option('--pay-immediately', 'pay at once the payments that have no payer step (MERCHANT_SCAN, BANKAPP_A/B notification, direct debit)')
    .option('--rate-limit <n>', 'requests per second per merchant_id (0: no limit)', String(DEFAULT_RATE_LIMIT.perSecond))
    .option('--public-url <url>', 'base URL of the links the sandbox hands out, when payers reach it through another address')
    .option('--promptpay-id <id>', 'PromptPay id the Thai QR codes pay to', DEFAULT_SETTINGS.promptPayId)
    .option('--log-level <level>', 'pino log level of the log on stderr', 'info')
    .option('--json', 'print the start-up information as one JSON object')
    .action(async (opts: SandboxOptions) => {
      const port = wholeNumber('--port', opts.port, 65535)
      const perSecond = wholeNumber('--rate-limit', opts.rateLimit, 1_000_000)
      if (E.isLeft(parsePromptPayId(opts.promptpayId))) throw new UsageError(`--promptpay-id: ${JSON.stringify(opts.promptpayId)} is not a PromptPay id`)
      if (opts.publicUrl !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(opts.publicUrl)) throw new UsageError('--public-url must be an http(s) origin such as http://sandbox.test:7070')
      if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(opts.logLevel)) throw new UsageError('--log-level must be fatal, error, warn, info, debug, trace or silent')
      const merchants = await readMerchants(opts.merchant)
      const log = makeLogger({ level: opts.logLevel })
      const stateLock = opts.state === undefined ? undefined : await lockSandboxState(log, opts.state, 'satang sandbox')
      if (stateLock !== undefined && E.isLeft(stateLock)) {
        process.stderr.write(`satang: cannot start the sandbox: --state: ${stateLock.left}\n`)
        setExitCode(EXIT.failure)
        return
      }
      const release = async (): Promise<void> => {
        if (stateLock !== undefined) await stateLock.right.release()
      }
      const launched = await launchSandbox({
        log,
        host: opts.host,
        port,
        merchants,
        dataDir: opts.dataDir,
        rateLimit: { perSecond, burst: Math.max(1, perSecond * 2) },
        settings: { payImmediately: opts.payImmediately === true, promptPayId: opts.promptpayId },
        ...(opts.gatewayPrivateKey === undefined ? {} : { gatewayPrivateKeyFile: opts.gatewayPrivateKey }),
        ...(opts.publicUrl === undefined ? {} : { publicUrl: opts.publicUrl }),
        ...(opts.state === undefined ? {} : { statePath: opts.state }),
      })
      if (E.isLeft(launched)) {
        await release()
        const f = launched.left
        if (f.setting !== 'listen') throw new UsageError(`${FLAG_OF[f.setting]}: ${f.message}`)
        process.stderr.write(`satang: cannot start the sandbox: ${f.message}\n`)
        setExitCode(EXIT.failure)
        return
      }
      const { sandbox, keys } = launched.right

      const info = {
        url: sandbox.url,
        gateway: sandbox.gatewayUrl,
        control: sandbox.controlUrl,
        gateway_public_key_url: sandbox.publicKeyUrl,
        gateway_private_key_file: keys.privateKeyPath,
        gateway_key_generated: keys.generated,
        ...(keys.publicKeyPath === undefined ? {} : { gateway_public_key_file: keys.publicKeyPath }),
        merchants: [...merchants.keys()],
        state: opts.state ?? null,
      }
      if (opts.json === true) process.stdout.write(`${JSON.stringify(info)}\n`)
      else {
        const lines = [
          `satang sandbox listening on ${sandbox.url}`,
          `  gateway endpoint     ${sandbox.gatewayUrl}`,
          `  control API          ${sandbox.controlUrl}`,
          `  gateway public key   ${sandbox.publicKeyUrl}${info.gateway_public_key_file === undefined ? '' : ` (file: ${info.gateway_public_key_file})`}`,
          `  gateway private key  ${keys.privateKeyPath}${keys.generated ? ' (generated now)' : ''}`,
          `  merchants            ${merchants.size === 0 ? `none yet: pass --merchant ID=PEM or POST ${sandbox.controlUrl}/merchants` : [...merchants.keys()].join(', ')}`,
          `  state                ${opts.state ?? 'in memory only'}`,
          'Stop with Ctrl-C.',
        ]
        process.stdout.write(`${lines.join('\n')}\n`)
      }

      const signal = await untilSignal()
      log.info({ signal }, 'stopping the sandbox')
      await sandbox.close()
      await release()
      setExitCode(EXIT.ok)
    })
}
