import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadSigningVectors } from '../../test/support/vectors.ts'
import { MERCHANT_ID } from './seeded.ts'

/** The CLI the benches start as processes of their own. */
export const SATANG_BIN = fileURLToPath(new URL('../../bin/satang.js', import.meta.url))

export type Started = { readonly url: string; readonly pid: number | undefined; readonly stop: () => Promise<number | null> }

/** Starts `satang sandbox --port 0 --json` and resolves with its URL. */
export const startSandboxProcess = (args: ReadonlyArray<string>): Promise<Started> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SATANG_BIN, 'sandbox', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise<number | null>((done) => child.on('close', done))
    child.on('error', reject)
    let stdout = ''
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
      const line = stdout.split('\n')[0]
      if (!stdout.includes('\n') || line === undefined) return
      let info: unknown
      try {
        info = JSON.parse(line)
      } catch {
        // Thrown here, in a stream's event handler, it would end the whole bench process.
        info = undefined
      }
      if (typeof info === 'object' && info !== null && 'url' in info && typeof info.url === 'string') {
        resolve({
          url: info.url,
          pid: child.pid,
          stop: () => {
            child.kill('SIGTERM')
            return exited
          },
        })
      } else reject(new Error(`unexpected start-up line: ${line}`))
    })
    void exited.then((code) => reject(new Error(`satang sandbox exited (${String(code)}) before it started: ${stderr}`)))
  })

/** The signing vectors' keys as PEM files: the merchant's pair and the gateway's pair. */
export type KeyFiles = { readonly merchantPublic: string; readonly merchantPrivate: string; readonly gatewayPrivate: string; readonly gatewayPublic: string }

/** Writes the signing vectors' merchant and gateway keys into `dir` (a folder of the bench's own). */
export const writeKeyFiles = (dir: string): KeyFiles => {
  const { merchant, gateway } = loadSigningVectors().keys
  const files: KeyFiles = { merchantPublic: join(dir, 'merchant-public.pem'), merchantPrivate: join(dir, 'merchant-private.pem'), gatewayPrivate: join(dir, 'gateway-private.pem'), gatewayPublic: join(dir, 'gateway-public.pem') }
  writeFileSync(files.merchantPublic, merchant.public_key_pem)
  writeFileSync(files.merchantPrivate, merchant.private_key_pem)
  writeFileSync(files.gatewayPrivate, gateway.private_key_pem)
  writeFileSync(files.gatewayPublic, gateway.public_key_pem)
  return files
}

/** `satang sandbox` on an ephemeral port for the bench's merchant (MERCHANT_ID), signing as the gateway with `files`' key. */
export const startBenchSandbox = (files: KeyFiles, extra: ReadonlyArray<string> = []): Promise<Started> =>
  startSandboxProcess(['--port', '0', '--json', ...extra, '--log-level', 'warn', '--merchant', `${MERCHANT_ID}=${files.merchantPublic}`, '--gateway-private-key', files.gatewayPrivate])
