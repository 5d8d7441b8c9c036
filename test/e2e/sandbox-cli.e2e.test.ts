import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadPublicKey, makeVerifier } from '../../src/domain/gateway/signing.ts'
import { SandboxSnapshot } from '../../src/sandbox/state.ts'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { decodeAll } from '../../src/domain/violations.ts'
import { clientFor, control, expectLeft, expectRight, MERCHANT_ID, MERCHANT_PUBLIC_KEY_PEM } from '../sandbox/support.ts'
import { runCli, SATANG_BIN } from '../support/cli.ts'
import { loadSigningVectors } from '../support/vectors.ts'

/** Acceptance: `satang sandbox --help`, a bad `--merchant` exits 2, a real start prints its URL and serves /gateway. */

type Running = { readonly child: ChildProcessWithoutNullStreams; readonly url: string; readonly stdout: () => string; readonly exit: Promise<number | null> }

/** Spawns `satang sandbox …` and resolves once it printed its base URL. */
const startCli = (args: ReadonlyArray<string>, cwd: string): Promise<Running> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SATANG_BIN, 'sandbox', ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const exit = new Promise<number | null>((done) => child.on('close', done))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`no URL printed within 20 s; stdout: ${stdout}; stderr: ${stderr}`))
    }, 20_000)
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout)
      if (m?.[1] !== undefined) {
        clearTimeout(timer)
        resolve({ child, url: m[1], stdout: () => stdout, exit })
      }
    })
    void exit.then((code) => {
      clearTimeout(timer)
      reject(new Error(`satang sandbox exited (${String(code)}) before printing its URL; stderr: ${stderr}`))
    })
  })

describe('satang sandbox (the real CLI)', () => {
  let dir: string
  let keyFile: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'satang-sandbox-cli-'))
    keyFile = join(dir, 'merchant-public.pem')
    await writeFile(keyFile, MERCHANT_PUBLIC_KEY_PEM)
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('--help documents the flags', async () => {
    const r = await runCli(['sandbox', '--help'])
    expect(r.code).toBe(0)
    for (const flag of ['--port <port>', '--host <host>', '--merchant <id=file>', '--gateway-private-key <file>', '--data-dir <dir>', '--state <file>', '--pay-immediately', '--rate-limit <n>']) {
      expect(r.stdout).toContain(flag)
    }
    // commander wraps help to the terminal width
    const help = r.stdout.replace(/\s+/g, ' ')
    expect(help).toContain('port to listen on (0: any free port) (default: "7070")')
    expect(help).toContain('address to listen on (default: "127.0.0.1")')
    expect(help).toContain('(default: ".satang/sandbox")')
  })

  it.each([
    [['--merchant', '12345=key.pem'], '--merchant: merchant id "12345" must be 18 digits starting with 14'],
    [['--merchant', `${MERCHANT_ID}`], '--merchant must be MERCHANT_ID=PUBLIC_KEY_PEM_FILE'],
    [['--merchant', `${MERCHANT_ID}=missing.pem`], `cannot read public key file of merchant ${MERCHANT_ID} "missing.pem": no such file`],
    [['--port', 'eighty'], '--port must be a whole number from 0 to 65535'],
    [['--gateway-private-key', 'missing.pem'], '--gateway-private-key: cannot read gateway private key "missing.pem": no such file'],
  ])('exits 2 with a clear message for %j', async (args, message) => {
    const r = await runCli(['sandbox', ...args], { cwd: dir })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`satang: ${message}`)
    expect(r.stdout).toBe('')
  })

  it('exits 2 for a merchant key file that is not a public key', async () => {
    const bad = join(dir, 'bad.pem')
    await writeFile(bad, 'not a key')
    const r = await runCli(['sandbox', '--merchant', `${MERCHANT_ID}=${bad}`], { cwd: dir })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/not a usable RSA public key/)
  })

  it('starts, prints its URL, the keys and the control prefix, serves /gateway, saves its state and stops on SIGTERM', async () => {
    const state = join(dir, 'state.json')
    const dataDir = join(dir, 'data')
    const running = await startCli(['--port', '0', '--merchant', `${MERCHANT_ID}=${keyFile}`, '--data-dir', dataDir, '--state', state, '--log-level', 'warn'], dir)
    const out = running.stdout()
    expect(out).toContain(`gateway endpoint     ${running.url}/gateway`)
    expect(out).toContain(`control API          ${running.url}/_sandbox`)
    expect(out).toContain(`gateway public key   ${running.url}/_sandbox/keys/gateway.pem (file: ${join(dataDir, 'gateway-public.pem')})`)
    expect(out).toContain(`gateway private key  ${join(dataDir, 'gateway-private.pem')} (generated now)`)

    const served = await (await fetch(`${running.url}/_sandbox/keys/gateway.pem`)).text()
    expect(served).toBe(await readFile(join(dataDir, 'gateway-public.pem'), 'utf8'))

    // Answers are signed with the generated key, which the served public key verifies.
    const publicKey = loadPublicKey(served)
    if (E.isLeft(publicKey)) throw new Error(publicKey.left.message)
    const client = clientFor({ url: running.url }, { verifier: makeVerifier(satangCanonicalV1, publicKey.right) })
    try {
      const created = expectRight(
        await client.createDirectPayment({
          service: 'svc.thaiqr.pay',
          merchant_id: MERCHANT_ID,
          merchant_order_id: 'CLI-1',
          order_amount: '42',
          order_currency: 'THB',
          order_desc: 'From the CLI test',
          payment_method: 'THAI_QR',
          customer: { merchant_user_id: 'u-9' },
        })(),
      )
      expect(created.data).toMatchObject({ order_status: 'WP', order_amount: '42.00' })
      expect(expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'CLI-1' })()).data.order_status).toBe('WP')
    } finally {
      client.close()
    }

    running.child.kill('SIGTERM')
    expect(await running.exit).toBe(0)
    const saved = decodeAll(SandboxSnapshot, JSON.parse(await readFile(state, 'utf8')))
    expect(saved).toMatchObject({ _tag: 'Right', right: { orders: [{ merchantOrderId: 'CLI-1', amount: '42.00', status: 'WP' }] } })

    // A second start loads the state: the order is still there, and the same generated key is used.
    const again = await startCli(['--port', '0', '--merchant', `${MERCHANT_ID}=${keyFile}`, '--data-dir', dataDir, '--state', state, '--log-level', 'warn'], dir)
    expect(again.stdout()).not.toContain('generated now')
    const listed = await control({ controlUrl: `${again.url}/_sandbox` }, 'GET', '/orders?merchant_order_id=CLI-1')
    expect(listed.json['orders']).toHaveLength(1)
    again.child.kill('SIGINT')
    expect(await again.exit).toBe(0)
  })

  it('keeps a second sandbox off its --state file, naming itself, until it is gone (SIGKILL leaves a stale lock the next one replaces)', async () => {
    const state = join(dir, 'shared-state.json')
    const gatewayKey = join(dir, 'lock-gateway-private.pem')
    await writeFile(gatewayKey, loadSigningVectors().keys.gateway.private_key_pem)
    const args = ['--port', '0', '--merchant', `${MERCHANT_ID}=${keyFile}`, '--gateway-private-key', gatewayKey, '--state', state, '--log-level', 'warn']
    const first = await startCli(args, dir)
    try {
      const client = clientFor({ url: first.url })
      try {
        const order = { service: 'svc.thaiqr.pay', merchant_id: MERCHANT_ID, merchant_order_id: 'LOCK-1', order_amount: '12.5', order_currency: 'THB', order_desc: 'Lock test', payment_method: 'THAI_QR', customer: { merchant_user_id: 'u-9' } } as const
        expectRight(await client.createDirectPayment(order)())
      } finally {
        client.close()
      }
      expect(JSON.parse(await readFile(`${state}.lock`, 'utf8'))).toMatchObject({ pid: first.child.pid, command: 'satang sandbox' })

      const second = await runCli(['sandbox', ...args], { cwd: dir })
      expect(second.code, second.stderr).toBe(3)
      expect(second.stderr).toContain(`satang: cannot start the sandbox: --state: the sandbox state ${state} is in use by satang sandbox (pid ${String(first.child.pid)}, started 20`)
      expect(second.stderr).toContain(`(lock file ${state}.lock)`)
      expect(second.stdout).toBe('')
      // the first goes on serving, its order untouched
      const listed = await control({ controlUrl: `${first.url}/_sandbox` }, 'GET', '/orders?merchant_order_id=LOCK-1')
      expect(listed.json['orders']).toHaveLength(1)
    } finally {
      first.child.kill('SIGKILL')
    }
    await first.exit
    // SIGKILL ran no clean-up: the lock names a process that is gone, and the next sandbox replaces it
    expect(JSON.parse(await readFile(`${state}.lock`, 'utf8'))).toMatchObject({ pid: first.child.pid })
    const next = await startCli(args, dir)
    const listed = await control({ controlUrl: `${next.url}/_sandbox` }, 'GET', '/orders?merchant_order_id=LOCK-1')
    expect(listed.json['orders']).toHaveLength(1)
    expect(JSON.parse(await readFile(`${state}.lock`, 'utf8'))).toMatchObject({ pid: next.child.pid })
    next.child.kill('SIGTERM')
    expect(await next.exit).toBe(0)
    await expect(readFile(`${state}.lock`, 'utf8')).rejects.toThrow(/ENOENT/)
  })

  it('uses the gateway key given with --gateway-private-key', async () => {
    const gatewayKey = join(dir, 'gateway-private.pem')
    await writeFile(gatewayKey, loadSigningVectors().keys.gateway.private_key_pem)
    const running = await startCli(['--port', '0', '--merchant', `${MERCHANT_ID}=${keyFile}`, '--gateway-private-key', gatewayKey, '--log-level', 'warn'], dir)
    const client = clientFor({ url: running.url })
    try {
      // A rejection, not a DecodeFailed: the answer verified with the vectors' gateway public key.
      expect(expectLeft(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'NONE' })())).toMatchObject({ _tag: 'GatewayRejected', code: 404001 })
    } finally {
      client.close()
      running.child.kill('SIGTERM')
    }
    expect(await running.exit).toBe(0)
  })
})
