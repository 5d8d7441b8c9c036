import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import kafkajs, { type IHeaders } from 'kafkajs'
import { GenericContainer, type StartedTestContainer } from 'testcontainers'
import { freePort, freePortRun } from './ports.ts'
import { dockerProblem } from './docker.ts'
import { filterKafkajsNegativeTimeoutWarning } from './kafkajs-warning.ts'

const { Kafka, logLevel } = kafkajs
filterKafkajsNegativeTimeoutWarning()

/**
 * The Kafka broker of the tests: `SATANG_TEST_KAFKA_BROKERS` (CI starts one with scripts/kafka.sh), else
 * an Apache Kafka container when a Docker engine is reachable, else none: the tests that need one skip
 * and print why.
 */
export type TestBroker = { readonly brokers: ReadonlyArray<string>; readonly stop: () => Promise<void> }

const IMAGE = 'apache/kafka:4.1.2'

const configured = process.env['SATANG_TEST_KAFKA_BROKERS']?.split(',').map((b) => b.trim()).filter((b) => b !== '')

/** Why the Kafka tests cannot run here, or undefined when they can. */
export const kafkaSkipReason = async (): Promise<string | undefined> => {
  if (configured !== undefined && configured.length > 0) return undefined
  const problem = await dockerProblem()
  return problem === undefined ? undefined : `SATANG_TEST_KAFKA_BROKERS is not set (start a broker with scripts/kafka.sh start, then eval "$(scripts/kafka.sh env)") and no Docker engine is reachable (${problem})`
}

/** The configured broker, or a container started now. */
export const startTestBroker = async (): Promise<TestBroker> => {
  if (configured !== undefined && configured.length > 0) return { brokers: configured, stop: () => Promise.resolve() }
  const port = await freePort()
  const container: StartedTestContainer = await new GenericContainer(IMAGE)
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${String(port)}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
    })
    .withExposedPorts({ container: 9092, host: port })
    .start()
  return { brokers: [`127.0.0.1:${String(port)}`], stop: async () => void (await container.stop()) }
}

/**
 * The secure listener of the test broker (scripts/kafka.sh's SASL_SSL with SCRAM-SHA-512), from
 * `scripts/kafka.sh env`: its address, the CA that signs its certificate, the SCRAM user and the file
 * holding the password.
 */
export type SecureListener = { readonly brokers: ReadonlyArray<string>; readonly caFile: string; readonly username: string; readonly passwordFile: string }

const SECURE_VARIABLES = ['SATANG_TEST_KAFKA_SECURE_BROKERS', 'SATANG_TEST_KAFKA_SECURE_CA_FILE', 'SATANG_TEST_KAFKA_SECURE_USERNAME', 'SATANG_TEST_KAFKA_SECURE_PASSWORD_FILE'] as const

/** `reason`, for a test to print and skip, outside CI; in CI (CI=true) `what` must run, so it throws instead. */
const skipOutsideCi = (what: string, reason: string): string => {
  if (process.env['CI'] === 'true') throw new Error(`CI must run ${what}: ${reason}`)
  return reason
}

/** The configured secure listener, or undefined when its variables are not all set. */
export const secureListener = (): SecureListener | undefined => {
  const [brokers, caFile, username, passwordFile] = SECURE_VARIABLES.map((v) => process.env[v]?.trim() ?? '')
  if (brokers === undefined || caFile === undefined || username === undefined || passwordFile === undefined) return undefined
  if ([brokers, caFile, username, passwordFile].some((v) => v === '')) return undefined
  return { brokers: brokers.split(',').map((b) => b.trim()), caFile, username, passwordFile }
}

/**
 * Why the tests over the secure listener cannot run here, or undefined when they can. In CI (CI=true)
 * they must run: a missing variable throws instead of skipping.
 */
export const secureListenerSkipReason = (): string | undefined => {
  if (secureListener() !== undefined) return undefined
  const missing = SECURE_VARIABLES.filter((v) => (process.env[v]?.trim() ?? '') === '')
  const reason = `${missing.join(', ')} not set (start a broker with scripts/kafka.sh start, then eval "$(scripts/kafka.sh env)")`
  return skipOutsideCi('the Kafka tests over the secure listener (SASL_SSL)', reason)
}

/**
 * Why the secure listener cannot be tried with `mechanism` (plain, scram-sha-256) here, or undefined when
 * it can: SATANG_TEST_KAFKA_SECURE_MECHANISMS (scripts/kafka.sh env) lists what it takes. A broker whose
 * storage was formatted before SCRAM-SHA-256 was added lacks that one (`scripts/kafka.sh reset` gives
 * it); in CI (a fresh broker) a mechanism missing fails instead of skipping.
 */
export const secureMechanismSkipReason = (mechanism: 'plain' | 'scram-sha-256'): string | undefined => {
  const listed = (process.env['SATANG_TEST_KAFKA_SECURE_MECHANISMS'] ?? '').split(/\s+/).filter((m) => m !== '')
  if (listed.includes(mechanism)) return undefined
  const reason = `the secure listener does not take ${mechanism} (SATANG_TEST_KAFKA_SECURE_MECHANISMS=${JSON.stringify(listed.join(' '))}; scripts/kafka.sh reset, start, then eval "$(scripts/kafka.sh env)")`
  return skipOutsideCi(`the relay over SASL_SSL with ${mechanism}`, reason)
}

/** satang's settings for the relay to publish through the secure listener (SCRAM-SHA-512 over TLS). */
export const secureRelaySettings = (l: SecureListener, passwordFile: string = l.passwordFile): Readonly<Record<string, string>> => ({
  SATANG_KAFKA_BROKERS: l.brokers.join(','),
  SATANG_KAFKA_SSL: 'true',
  SATANG_KAFKA_SSL_CA_FILE: l.caFile,
  SATANG_KAFKA_SASL_MECHANISM: 'scram-sha-512',
  SATANG_KAFKA_SASL_USERNAME: l.username,
  SATANG_KAFKA_SASL_PASSWORD_FILE: passwordFile,
})

/** kafkajs's connection settings for the secure listener (the consumer of the tests). */
const kafkajsSecurity = (l: SecureListener | undefined) =>
  l === undefined
    ? {}
    : { ssl: { ca: [readFileSync(l.caFile, 'utf8')], rejectUnauthorized: true }, sasl: { mechanism: 'scram-sha-512' as const, username: l.username, password: readFileSync(l.passwordFile, 'utf8').trim() } }

/** A broker of the test's own, started and stopped with scripts/kafka.sh (the broker-down tests). */
export type ScriptBroker = { readonly brokers: ReadonlyArray<string>; readonly start: () => Promise<void>; readonly stop: () => Promise<void>; readonly remove: () => Promise<void> }

const KAFKA_SH = fileURLToPath(new URL('../../scripts/kafka.sh', import.meta.url))

/** Runs scripts/kafka.sh with `args`, `env` added to this process's; its exit code and everything it printed. */
export const runKafkaScript = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn('bash', [KAFKA_SH, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })

/** Why a broker of our own cannot be run here (scripts/kafka.sh needs Java 17+), or undefined. */
export const scriptBrokerSkipReason = async (): Promise<string | undefined> => {
  const java = await new Promise<string | undefined>((resolve) => {
    const child = spawn('java', ['-version'], { stdio: ['ignore', 'ignore', 'ignore'] })
    child.on('error', (e) => resolve(`java is not on PATH (${e.message})`))
    child.on('close', (code) => resolve(code === 0 ? undefined : `java -version exited ${String(code)}`))
  })
  return java === undefined ? undefined : `scripts/kafka.sh cannot run a broker here: ${java}`
}

/** A broker on a free port with its own run folder; not started yet. */
export const scriptBroker = async (): Promise<ScriptBroker> => {
  // The broker's port and the two scripts/kafka.sh derives from it (controller, secure listener).
  const port = await freePortRun(3)
  const runDir = await mkdtemp(join(tmpdir(), 'satang-kafka-test-'))
  const env = { SATANG_KAFKA_PORT: String(port), SATANG_KAFKA_RUN_DIR: runDir }
  const must = async (command: string): Promise<void> => {
    const r = await runKafkaScript([command], env)
    if (r.code !== 0) throw new Error(`scripts/kafka.sh ${command} failed (${String(r.code)}):\n${r.output}`)
  }
  return {
    brokers: [`127.0.0.1:${String(port)}`],
    start: () => must('start'),
    stop: () => must('stop'),
    remove: async () => {
      await runKafkaScript(['stop'], env)
      await rm(runDir, { recursive: true, force: true })
    },
  }
}

/** A message as a consumer read it: key, value and headers as text, where it sat. */
export type ConsumedMessage = {
  readonly key: string
  readonly value: string
  readonly headers: Readonly<Record<string, string>>
  readonly partition: number
  readonly offset: string
  readonly timestamp: string
}

const headerText = (headers: IHeaders | undefined): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue
    out[name] = Array.isArray(value) ? value.map((v) => v.toString()).join(',') : value.toString()
  }
  return out
}

/**
 * Reads `topic` from the beginning (through the secure listener when `secure` is given), as a new consumer group would, until it has every message the topic
 * holds now (its high watermarks), and returns them in each partition's order.
 */
export const consumeTopic = async (brokers: ReadonlyArray<string>, topic: string, timeoutMs = 60_000, secure?: SecureListener): Promise<ReadonlyArray<ConsumedMessage>> => {
  const kafka = new Kafka({ clientId: 'satang-test-consumer', brokers: [...brokers], logLevel: logLevel.NOTHING, ...kafkajsSecurity(secure) })
  const admin = kafka.admin()
  await admin.connect()
  const offsets = await admin.fetchTopicOffsets(topic)
  await admin.disconnect()
  const total = offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0)
  const messages: ConsumedMessage[] = []
  if (total === 0) return messages
  const consumer = kafka.consumer({ groupId: `satang-test-${String(Date.now())}-${String(Math.random()).slice(2)}`, maxWaitTimeInMs: 200 })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${String(messages.length)} of ${String(total)} messages of ${topic} within ${String(timeoutMs)} ms`)), timeoutMs)
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            messages.push({ key: message.key?.toString() ?? '', value: message.value?.toString() ?? '', headers: headerText(message.headers), partition, offset: message.offset, timestamp: message.timestamp })
            if (messages.length >= total) {
              clearTimeout(timer)
              resolve()
            }
            return Promise.resolve()
          },
        })
        .catch(reject)
    })
  } finally {
    await consumer.disconnect()
  }
  return messages
}

/** A message as kcat -J prints it (kcat's JSON envelope). */
export type KcatMessage = { readonly partition: number; readonly offset: number; readonly key: string | null; readonly payload: string | null; readonly headers?: ReadonlyArray<string> }

/**
 * Why kcat (a librdkafka client, as most clients outside the JVM are) cannot run here, or undefined
 * when it can. In CI kcat must be there (.ci/run installs Debian's): a missing one throws.
 */
export const kcatSkipReason = (): string | undefined => {
  const r = spawnSync('kcat', ['-V'], { encoding: 'utf8' })
  if (r.error === undefined && r.status === 0) return undefined
  const reason = `kcat is not installed (${r.error?.message ?? `kcat -V exited ${String(r.status)}`}; apt-get install kcat)`
  return skipOutsideCi('the kcat consumer test', reason)
}

/**
 * Every message of `topic` from the beginning, read by kcat (-C -o beginning -e -J); over the secure
 * listener when given, with SASL PLAIN: librdkafka before 2.6.1 (Debian 12's kcat links 2.0.2) cannot
 * log in with SCRAM to a Kafka 4 broker, which answers "invalid credentials" to the right password
 * (edenhill/kcat#462; docs/kafka.md).
 */
export const kcatConsume = async (brokers: ReadonlyArray<string>, topic: string, secure?: SecureListener): Promise<ReadonlyArray<KcatMessage>> => {
  const args = ['-C', '-b', brokers.join(','), '-t', topic, '-o', 'beginning', '-e', '-J', '-q']
  if (secure === undefined) return runKcat(args)
  // The password goes in a configuration file of kcat's (-F, mode 0600, in a new folder), not on its command line, where ps shows it.
  const dir = await mkdtemp(join(tmpdir(), 'satang-kcat-'))
  try {
    const config = join(dir, 'kcat.conf')
    const lines = ['security.protocol=SASL_SSL', 'sasl.mechanisms=PLAIN', `sasl.username=${secure.username}`, `sasl.password=${readFileSync(secure.passwordFile, 'utf8').trim()}`, `ssl.ca.location=${secure.caFile}`]
    writeFileSync(config, `${lines.join('\n')}\n`, { mode: 0o600, flag: 'wx' })
    return await runKcat([...args, '-F', config])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const runKcat = (args: ReadonlyArray<string>): Promise<ReadonlyArray<KcatMessage>> =>
  new Promise((resolve, reject) => {
    const child = spawn('kcat', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, 60_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code !== 0) reject(new Error(`kcat ${timedOut ? 'did not reach the end of the topic within 60 s' : `exited ${String(code)}`}: ${err.slice(0, 2000)}`))
      else resolve(out.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as KcatMessage))
    })
  })
