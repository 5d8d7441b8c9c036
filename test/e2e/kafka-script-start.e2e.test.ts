import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runKafkaScript, scriptBrokerSkipReason } from '../support/kafka.ts'
import { freePortRun } from '../support/ports.ts'

// scripts/kafka.sh start launches the broker as `setsid java … kafka.Kafka <config>` in the background
// and watches the process it launched until the broker answers. Until setsid has exec'd java, that
// process's command line is still the script's own; on a busy machine (CI, tests three files at a
// time) the first look can fall in that moment. The script once took it for a broker that had exited,
// failed the start and left the broker starting behind it (a flaky failure of the readiness test's
// broker restart). Here a `java` first on PATH holds the moment open for a second before it becomes
// the real java, with the same pid, for the broker only.

const kafkaSkip = await scriptBrokerSkipReason()
if (kafkaSkip !== undefined) console.info(`scripts/kafka.sh start test skipped: ${kafkaSkip}`)

describe.skipIf(kafkaSkip !== undefined)('scripts/kafka.sh start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'satang-kafka-start-'))
  const runDir = join(dir, 'run')
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
    env = { SATANG_KAFKA_PORT: String(port), SATANG_KAFKA_RUN_DIR: runDir, PATH: `${shims}:${process.env['PATH'] ?? ''}` }
    const started = await runKafkaScript(['start'], env)
    expect(started.output).not.toMatch(/exited during start-up/)
    expect(started.code, started.output).toBe(0)
    expect(started.output).toContain(`127.0.0.1:${String(port)}`)
    const status = await runKafkaScript(['status'], env)
    expect(status.code, status.output).toBe(0)
    expect(status.output).toMatch(/running \(pid \d+\)/)
  }, 180_000)
})
