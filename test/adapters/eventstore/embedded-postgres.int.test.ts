import { chmod, mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { Client } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmbeddedPostgres } from '../../../src/adapters/postgres/embedded.ts'
import { silentLogger } from '../../../src/logger.ts'
import { freePort, takenPort } from '../../support/ports.ts'

const log = silentLogger()

const sql = async (url: string, text: string): Promise<ReadonlyArray<Record<string, unknown>>> => {
  const client = new Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<Record<string, unknown>>(text)).rows
  } finally {
    await client.end()
  }
}

describe('embedded PostgreSQL', () => {
  let dir: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'satang-embedded-'))
    await chmod(dir, 0o755)
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('initialises a data folder on first start and reuses it on the next', async () => {
    const config = { dataDir: join(dir, 'pg'), port: await freePort() }
    const first = await startEmbeddedPostgres({ log }, config)()
    if (E.isLeft(first)) throw new Error(first.left.message, { cause: first.left.cause })
    expect(first.right.initialised).toBe(true)
    try {
      await sql(first.right.url, 'create table kept (note text); insert into kept values ($$still here$$)')
    } finally {
      await first.right.stop()
    }

    const second = await startEmbeddedPostgres({ log }, config)()
    if (E.isLeft(second)) throw new Error(second.left.message, { cause: second.left.cause })
    try {
      expect(second.right.initialised).toBe(false)
      expect(await sql(second.right.url, 'select note from kept')).toEqual([{ note: 'still here' }])
    } finally {
      await second.right.stop()
    }
    expect(await readdir(config.dataDir)).toContain('PG_VERSION')
  })

  it('refuses to initialise a folder that holds something else', async () => {
    const dataDir = join(dir, 'occupied')
    await mkdir(dataDir)
    await writeFile(join(dataDir, 'notes.txt'), 'mine')
    const started = await startEmbeddedPostgres({ log }, { dataDir, port: await freePort() })()
    expect(E.isLeft(started) && started.left.message).toMatch(/not empty/)
  })

  it('says so when the port is taken', async () => {
    const taken = await takenPort()
    try {
      const started = await startEmbeddedPostgres({ log }, { dataDir: join(dir, 'unused'), port: taken.port })()
      expect(E.isLeft(started) && started.left.message).toMatch(/in use/)
    } finally {
      await taken.release()
    }
  })
})
