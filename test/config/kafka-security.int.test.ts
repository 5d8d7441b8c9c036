import { execFileSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kafkaSecurityOf } from '../../src/composition/kafka-security.ts'
import { makeLogger } from '../../src/logger.ts'
import { StartupError, loadConfig } from '../../src/main.ts'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/**
 * Issue 26: the relay's TLS and SASL settings. Each bad combination or file stops `satang relay` with
 * exit 2 and a line naming the variable (and never a password); a good set is read as the publisher
 * needs it, and turning certificate checks off warns loudly.
 */

const dir = mkdtempSync(join(tmpdir(), 'satang-kafka-security-'))
const path = (name: string): string => join(dir, name)
const PASSWORD = 'never-print-me-0123456789'
let certFile: string
let keyFile: string
let otherKeyFile: string
let passwordFile: string

beforeAll(() => {
  // A certificate and its key (openssl, as an operator makes them), and a key of another pair.
  certFile = path('client.pem')
  keyFile = path('client.key')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=satang relay', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' })
  otherKeyFile = path('other.key')
  writeFileSync(otherKeyFile, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }))
  passwordFile = path('password')
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 })
  writeFileSync(path('not-pem.txt'), 'this is not a certificate\n')
  writeFileSync(path('empty'), '\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A logger writing its JSON lines into `lines`. */
const capture = (lines: string[]) => makeLogger({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => void (lines.push(chunk.toString('utf8')), done()) }))

const relayWith = async (settings: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> =>
  runCli(['relay'], { env: envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', SATANG_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', SATANG_KAFKA_BROKERS: '127.0.0.1:1', ...settings }) })

/** `satang relay` (a process) refuses to start: exit 2, the variable named with the rule, and no password anywhere. */
const relayRefuses = async (settings: Record<string, string>, variable: string, rule: RegExp): Promise<void> => {
  const r = await relayWith(settings)
  expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 2, stderr: expect.stringContaining(variable) })
  expect(r.stderr).toMatch(rule)
  expect(`${r.stdout}${r.stderr}`).not.toContain(PASSWORD)
}

/**
 * The start-up configuration refuses: the same loadConfig whose StartupError makes `satang relay` and
 * `satang up` exit 2 (shown by the process cases above), in-process: a satang start costs seconds.
 */
const refuses = async (settings: Record<string, string>, variable: string, rule: RegExp): Promise<void> => {
  const error = await loadConfig({ SATANG_KAFKA_BROKERS: '127.0.0.1:1', ...settings }).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(StartupError)
  const message = error instanceof Error ? error.message : ''
  expect(message).toContain(variable)
  expect(message).toMatch(rule)
  expect(message).not.toContain(PASSWORD)
}

describe('bad Kafka security settings: satang relay exits 2 naming the variable (the cases of issue 26 as processes, the rest through the same start-up configuration)', () => {
  it('a SASL mechanism without a username', async () => {
    await relayRefuses({ SATANG_KAFKA_SASL_MECHANISM: 'scram-sha-512', SATANG_KAFKA_SASL_PASSWORD_FILE: passwordFile }, 'SATANG_KAFKA_SASL_USERNAME', /SATANG_KAFKA_SASL_USERNAME \(environment\): is required when SATANG_KAFKA_SASL_MECHANISM is set/)
  })

  it('a SASL mechanism without a password', async () => {
    await refuses({ SATANG_KAFKA_SASL_MECHANISM: 'scram-sha-256', SATANG_KAFKA_SASL_USERNAME: 'satang' }, 'SATANG_KAFKA_SASL_PASSWORD_FILE', /SATANG_KAFKA_SASL_PASSWORD_FILE \(environment\): is required when SATANG_KAFKA_SASL_MECHANISM is set/)
  })

  it('the password both in a file and in SATANG_KAFKA_SASL_PASSWORD (the password is not printed)', async () => {
    await relayRefuses({ SATANG_KAFKA_SASL_MECHANISM: 'plain', SATANG_KAFKA_SASL_USERNAME: 'satang', SATANG_KAFKA_SASL_PASSWORD: PASSWORD, SATANG_KAFKA_SASL_PASSWORD_FILE: passwordFile }, 'SATANG_KAFKA_SASL_PASSWORD_FILE', /cannot be set together with SATANG_KAFKA_SASL_PASSWORD/)
  })

  it('a username without a mechanism', async () => {
    await refuses({ SATANG_KAFKA_SASL_USERNAME: 'satang' }, 'SATANG_KAFKA_SASL_MECHANISM', /SATANG_KAFKA_SASL_MECHANISM \(environment\): is required when SATANG_KAFKA_SASL_USERNAME is set/)
  })

  it('a mechanism satang does not speak', async () => {
    await refuses({ SATANG_KAFKA_SASL_MECHANISM: 'gssapi', SATANG_KAFKA_SASL_USERNAME: 'satang', SATANG_KAFKA_SASL_PASSWORD_FILE: passwordFile }, 'SATANG_KAFKA_SASL_MECHANISM', /must be one of plain, scram-sha-256, scram-sha-512/)
  })

  it('an empty password file', async () => {
    await refuses({ SATANG_KAFKA_SASL_MECHANISM: 'scram-sha-512', SATANG_KAFKA_SASL_USERNAME: 'satang', SATANG_KAFKA_SASL_PASSWORD_FILE: path('empty') }, 'SATANG_KAFKA_SASL_PASSWORD_FILE', /SATANG_KAFKA_SASL_PASSWORD_FILE: ".*empty" is empty/)
  })

  it('a CA file that is not PEM', async () => {
    await relayRefuses({ SATANG_KAFKA_SSL: 'true', SATANG_KAFKA_SSL_CA_FILE: path('not-pem.txt') }, 'SATANG_KAFKA_SSL_CA_FILE', /SATANG_KAFKA_SSL_CA_FILE: ".*not-pem.txt" is not a PEM certificate file/)
  })

  it('a CA file that does not exist', async () => {
    await refuses({ SATANG_KAFKA_SSL: 'true', SATANG_KAFKA_SSL_CA_FILE: path('absent.pem') }, 'SATANG_KAFKA_SSL_CA_FILE', /SATANG_KAFKA_SSL_CA_FILE: cannot read ".*absent.pem" \(no such file\)/)
  })

  it('a CA file larger than the 4 MiB satang reads (a log file given by mistake)', async () => {
    const huge = path('huge-ca.pem')
    writeFileSync(huge, '')
    truncateSync(huge, 5 * 1024 * 1024)
    await refuses({ SATANG_KAFKA_SSL: 'true', SATANG_KAFKA_SSL_CA_FILE: huge }, 'SATANG_KAFKA_SSL_CA_FILE', /SATANG_KAFKA_SSL_CA_FILE: cannot read ".*huge-ca.pem" \(is 5 MiB, more than the 4 MiB satang reads of it\)/)
  })

  it('a key without its certificate', async () => {
    await relayRefuses({ SATANG_KAFKA_SSL: 'true', SATANG_KAFKA_SSL_KEY_FILE: keyFile }, 'SATANG_KAFKA_SSL_CERT_FILE', /SATANG_KAFKA_SSL_CERT_FILE \(environment\): is required when SATANG_KAFKA_SSL_KEY_FILE is set/)
  })

  it('a certificate without its key', async () => {
    await refuses({ SATANG_KAFKA_SSL: 'true', SATANG_KAFKA_SSL_CERT_FILE: certFile }, 'SATANG_KAFKA_SSL_KEY_FILE', /SATANG_KAFKA_SSL_KEY_FILE \(environment\): is required when SATANG_KAFKA_SSL_CERT_FILE is set/)
  })

  it('a key that is not the certificate’s', async () => {
    await refuses({ SATANG_KAFKA_SSL: 'true', SATANG_KAFKA_SSL_CERT_FILE: certFile, SATANG_KAFKA_SSL_KEY_FILE: otherKeyFile }, 'SATANG_KAFKA_SSL_KEY_FILE', /is not the key of the certificate in SATANG_KAFKA_SSL_CERT_FILE/)
  })

  it('TLS files while SATANG_KAFKA_SSL is not true', async () => {
    await refuses({ SATANG_KAFKA_SSL_CA_FILE: certFile }, 'SATANG_KAFKA_SSL', /SATANG_KAFKA_SSL \(environment\): must be true when SATANG_KAFKA_SSL_CA_FILE is set/)
  })

  it('SATANG_KAFKA_SSL that is not true or false', async () => {
    await refuses({ SATANG_KAFKA_SSL: 'yes' }, 'SATANG_KAFKA_SSL', /SATANG_KAFKA_SSL \(environment\): must be one of true, false/)
  })
})

describe('good Kafka security settings', () => {
  it('SASL/SCRAM over TLS with mutual TLS: the password is read from its file, the PEM files as they are', async () => {
    const config = await loadConfig({
      SATANG_KAFKA_BROKERS: 'kafka-1:9093',
      SATANG_KAFKA_SSL: 'true',
      SATANG_KAFKA_SSL_CA_FILE: certFile,
      SATANG_KAFKA_SSL_CERT_FILE: certFile,
      SATANG_KAFKA_SSL_KEY_FILE: keyFile,
      SATANG_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      SATANG_KAFKA_SASL_USERNAME: 'satang',
      SATANG_KAFKA_SASL_PASSWORD_FILE: passwordFile,
    })
    const lines: string[] = []
    const security = kafkaSecurityOf(config, capture(lines))
    expect(security.tls).toEqual({ rejectUnauthorized: true, ca: readFileSync(certFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') })
    expect({ mechanism: security.sasl?.mechanism, username: security.sasl?.username, password: security.sasl?.password() }).toEqual({ mechanism: 'scram-sha-512', username: 'satang', password: PASSWORD })
    expect(lines).toEqual([])
  })

  it('SATANG_KAFKA_SSL_REJECT_UNAUTHORIZED=false works, with a loud warning', async () => {
    const config = await loadConfig({ SATANG_KAFKA_BROKERS: 'kafka-1:9093', SATANG_KAFKA_SSL: 'true', SATANG_KAFKA_SSL_REJECT_UNAUTHORIZED: 'false' })
    const lines: string[] = []
    const security = kafkaSecurityOf(config, capture(lines))
    expect(security.tls?.rejectUnauthorized).toBe(false)
    expect(lines.join('\n')).toMatch(/"level":40.*WARNING: SATANG_KAFKA_SSL_REJECT_UNAUTHORIZED=false: the relay does NOT check the brokers' certificates/)
  })
})
