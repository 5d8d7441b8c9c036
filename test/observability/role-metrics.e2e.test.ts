import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM, startSandbox } from '../sandbox/support.ts'
import { kafkaSkipReason, startTestBroker, type TestBroker } from '../support/kafka.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess, type SatangProcess } from '../support/process.ts'
import { hasPromtool, promtoolFindings } from './promtool.ts'

/*
 * `promtool check metrics` reports nothing on the /metrics of every role, each run as its own real
 * process on one database: api, projector, relay (publishing to a real broker when one is configured),
 * scheduler, and all of them in one (`satang up`).
 */

const promtool = hasPromtool()
if (!promtool) console.info('promtool is not installed (apt-get install prometheus; .ci/run installs it): the role metrics test is skipped')
const kafka = (await kafkaSkipReason()) === undefined

describe.skipIf(!promtool)('promtool check metrics on every role', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>
  let sandbox: Sandbox
  let broker: TestBroker | undefined
  let dir: string
  const running = new Map<string, { readonly process: SatangProcess; readonly url: string }>()

  const start = async (role: string): Promise<void> => {
    const port = await freePort()
    const data = join(dir, role)
    const p = startSatangProcess(role === 'all' ? ['up'] : ['up', '--role', role], {
      cwd: dir,
      env: envWithoutSatangSettings({
        SATANG_DATABASE_URL: db.url,
        SATANG_GATEWAY_BASE_URL: sandbox.url,
        SATANG_MERCHANT_ID: MERCHANT_ID,
        SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
        SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
        SATANG_HTTP_PORT: String(port),
        SATANG_DATA_DIR: data,
        SATANG_LOG_LEVEL: 'warn',
        ...(broker === undefined ? {} : { SATANG_KAFKA_BROKERS: broker.brokers.join(','), SATANG_KAFKA_TOPIC: `satang.test.roles.${String(port)}` }),
      }),
    })
    running.set(role, { process: p, url: `http://127.0.0.1:${String(port)}` })
    await p.waitFor(/satang: up/, 120_000)
  }

  beforeAll(async () => {
    db = await freshDatabase('rolemetrics')
    sandbox = await startSandbox()
    if (kafka) broker = await startTestBroker()
    dir = mkdtempSync(join(tmpdir(), 'satang-roles-'))
    writeFileSync(join(dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
    writeFileSync(join(dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
    await start('all') // migrates first
    await Promise.all(['api', 'projector', 'relay', 'scheduler'].map(start))
  }, 300_000)

  afterAll(async () => {
    for (const r of running.values()) await r.process.stop('SIGTERM')
    await sandbox?.close()
    await broker?.stop()
    await db?.drop()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it.each(['all', 'api', 'projector', 'relay', 'scheduler'])('/metrics of the %s role passes promtool', async (role) => {
    const r = running.get(role)
    if (r === undefined) throw new Error(`${role} did not start`)
    const text = await (await fetch(`${r.url}/metrics`)).text()
    expect(text).toMatch(/^# TYPE process_cpu_seconds_total counter$/m)
    expect(text).toMatch(/^# TYPE satang_http_request_duration_seconds histogram$/m)
    expect(promtoolFindings(text)).toBe('')
    if (role === 'projector' || role === 'all') expect(text).toMatch(/^# TYPE satang_projector_batch_duration_seconds histogram$/m)
    if ((role === 'relay' || role === 'all') && broker !== undefined) expect(text).toMatch(/^# TYPE satang_relay_events_published_total counter$/m)
    if (role === 'api' || role === 'all') expect(text).toMatch(/^# TYPE satang_gateway_call_duration_seconds histogram$/m)
  })
})
