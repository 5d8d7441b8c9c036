import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Kafka, logLevel, type SASLOptions } from 'kafkajs'
import { runKafkaScript, scriptBrokerSkipReason } from '../support/kafka.ts'
import { freePortRun } from '../support/ports.ts'

// scripts/kafka.sh start launches the broker as `setsid java … kafka.Kafka <config>` in the background
// and watches the process it launched until the broker answers. Until setsid has exec'd java, that
// process's command line is still the script's own; on a busy machine (CI, tests three files at a
// time) the first look can fall in that moment. The script once took it for a broker that had exited,
// failed the start and left the broker starting behind it (a flaky failure of the readiness test's
// broker restart). Here a `java` first on PATH holds the moment open for a second before it becomes
// the real java, with the same pid, for the broker only.
//
// The same shim writes down every java command line the script runs: the format that creates the
// SCRAM user takes its password from an argument file, so no command line (which any local user can
// read in /proc) carries it, and the secure listener then takes that password.

const kafkaSkip = await scriptBrokerSkipReason()
if (kafkaSkip !== undefined) console.info(`scripts/kafka.sh start test skipped: ${kafkaSkip}`)

describe.skipIf(kafkaSkip !== undefined)('scripts/kafka.sh start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'satang-kafka-start-'))
  const runDir = join(dir, 'run')
  const commandLines = join(dir, 'java-command-lines')
  let securePort = 0
  /** satang's SCRAM logins with `password`, one per mechanism the format made. */
  const scramLogins = (password: string): ReadonlyArray<SASLOptions> => [
    { mechanism: 'scram-sha-512', username: 'satang', password },
    { mechanism: 'scram-sha-256', username: 'satang', password },
  ]
  /** Whether a kafkajs admin client logs in to the secure listener with `sasl`. */
  const logsIn = async (sasl: SASLOptions): Promise<boolean> => {
    const kafka = new Kafka({
      clientId: 'kafka-script-start-test',
      brokers: [`127.0.0.1:${String(securePort)}`],
      ssl: { ca: [readFileSync(join(runDir, 'secure', 'ca.pem'), 'utf8')], rejectUnauthorized: true },
      sasl,
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
      connectionTimeout: 10_000,
    })
    const admin = kafka.admin()
    try {
      await admin.connect()
      return (await admin.describeCluster()).brokers.length === 1
    } catch {
      return false
    } finally {
      await admin.disconnect()
    }
  }
  let env: NodeJS.ProcessEnv = {}
  afterAll(async () => {
    await runKafkaScript(['stop'], env)
    rmSync(dir, { recursive: true, force: true })
  })

  it('waits for a broker whose java is not yet exec\'d when the script first looks, and starts it once', async () => {
    const realJava = spawnSync('bash', ['-c', 'command -v java'], { encoding: 'utf8' }).stdout.trim()
    expect(realJava).not.toBe('')
    const shims = join(dir, 'bin')
    mkdirSync(shims, { recursive: true })
    // For the broker only: keep the arguments in a file, become a bash whose command line does not name
    // kafka.Kafka, wait a second, then exec the real java with them (same pid, as setsid's exec is).
    const shim = join(shims, 'java')
    writeFileSync(
      shim,
      `#!/bin/bash
printf '%s\\n' "$*" >>${JSON.stringify(commandLines)}
case " $* " in
  *" kafka.Kafka "*)
    args=$(mktemp)
    printf '%s\\0' "$@" >"$args"
    export SHIM_ARGS=$args
    exec bash -c 'sleep 1; mapfile -d "" a <"$SHIM_ARGS"; rm -f "$SHIM_ARGS"; exec ${realJava} "\${a[@]}"'
    ;;
esac
exec ${realJava} "$@"
`,
    )
    chmodSync(shim, 0o755)
    const port = await freePortRun(3)
    securePort = port + 2
    env = { SATANG_KAFKA_PORT: String(port), SATANG_KAFKA_RUN_DIR: runDir, PATH: `${shims}:${process.env['PATH'] ?? ''}` }
    const started = await runKafkaScript(['start'], env)
    expect(started.output).not.toMatch(/exited during start-up/)
    expect(started.code, started.output).toBe(0)
    expect(started.output).toContain(`127.0.0.1:${String(port)}`)
    const status = await runKafkaScript(['status'], env)
    expect(status.code, status.output).toBe(0)
    expect(status.output).toMatch(/running \(pid \d+\)/)
  }, 180_000)

  it('started again while it runs: answers with the running broker, and says when its configuration is not what the script would start it with now', async () => {
    const again = await runKafkaScript(['start'], env)
    expect(again.code, again.output).toBe(0)
    expect(again.output).toMatch(/already running \(pid \d+\)/)
    expect(again.output).not.toMatch(/configuration is not what/)
    // As a broker started by an older script: a line its server.properties had that this script no longer writes.
    const props = join(runDir, 'server.properties')
    const before = readFileSync(props, 'utf8')
    writeFileSync(props, `${before}log.retention.hours=1\n`)
    try {
      const stale = await runKafkaScript(['start'], env)
      expect(stale.code, stale.output).toBe(0)
      expect(stale.output).toMatch(/configuration is not what this script would start it with now .*scripts\/kafka\.sh stop, then start/)
      expect(stale.output).not.toContain(readFileSync(join(runDir, 'secure', 'scram-password'), 'utf8').trim())
    } finally {
      writeFileSync(props, before)
    }
  }, 60_000)

  it('formats the storage with the SCRAM password in an argument file, on no command line, and the secure listener takes it', async () => {
    const password = readFileSync(join(runDir, 'secure', 'scram-password'), 'utf8').trim()
    const keystorePassword = readFileSync(join(runDir, 'secure', 'keystore-password'), 'utf8').trim()
    expect(password).toMatch(/^[0-9a-f]{48}$/)
    const lines = readFileSync(commandLines, 'utf8').trim().split('\n')
    expect(lines.some((l) => l.includes(`@${join(runDir, 'secure', 'format.args')}`)), lines.join('\n')).toBe(true)
    expect(lines.some((l) => l.includes(' kafka.Kafka '))).toBe(true)
    for (const l of lines) {
      expect(l).not.toContain(password)
      expect(l).not.toContain(keystorePassword)
    }
    expect(existsSync(join(runDir, 'secure', 'format.args'))).toBe(false)
    // The format made the SCRAM user: a client of the secure listener logs in with that password
    // (both mechanisms), and not with another.
    for (const sasl of scramLogins(password)) expect({ mechanism: sasl.mechanism, loggedIn: await logsIn(sasl) }).toEqual({ mechanism: sasl.mechanism, loggedIn: true })
    for (const sasl of scramLogins('not-the-password')) expect({ mechanism: sasl.mechanism, loggedIn: await logsIn(sasl) }).toEqual({ mechanism: sasl.mechanism, loggedIn: false })
  }, 60_000)
})
