// The bare baseline of the notification figures, as a process of its own: the least an idempotent
// receiver must do — a node:http server that parses the JSON, verifies the gateway's RSA signature
// (the same canonical string), INSERTs the notification into one table keyed by order and status
// (`on conflict do nothing`: a redelivery stores nothing), and answers SUCCESS. No framework, no
// aggregate, no event log, no projector. Prints one JSON line { url } when it listens; SIGTERM stops it.
//   node bench/support/bare-receiver.ts <databaseUrl> <gatewayPublicKeyPem>
import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import * as E from 'fp-ts/lib/Either.js'
import pg from 'pg'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { loadPublicKey, makeVerifier } from '../../src/domain/gateway/signing.ts'

const [url, keyFile] = process.argv.slice(2)
if (url === undefined || keyFile === undefined) {
  process.stderr.write('usage: bare-receiver.ts <databaseUrl> <gatewayPublicKeyPem>\n')
  process.exit(2)
}
const key = loadPublicKey(readFileSync(keyFile, 'utf8'))
if (E.isLeft(key)) throw new Error(key.left.message)
const verifier = makeVerifier(satangCanonicalV1, key.right)
const pool = new pg.Pool({ connectionString: url, max: 2 * cpus().length, application_name: 'satang-bench-bare-receiver' })
await pool.query('create table if not exists bare_notifications (key text primary key, body jsonb not null, received_at timestamptz not null default now())')

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const answer = (status: number, text: string): void => {
      res.writeHead(status, { 'content-type': 'text/plain' }).end(text)
    }
    const run = async (): Promise<void> => {
      const text = Buffer.concat(chunks).toString('utf8')
      const fields = JSON.parse(text) as Record<string, unknown>
      if (!verifier.verify(fields).valid) return answer(400, 'bad signature')
      await pool.query({ name: 'bare-record', text: 'insert into bare_notifications (key, body) values ($1, $2) on conflict (key) do nothing', values: [`${String(fields['merchant_order_id'])}:${String(fields['order_status'])}`, text] })
      answer(200, 'SUCCESS')
    }
    run().catch((e: unknown) => answer(500, e instanceof Error ? e.message : 'error'))
  })
})
server.keepAliveTimeout = 30_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${String(address.port)}` })}\n`)
})
process.on('SIGTERM', () => {
  server.close()
  void pool.end().then(() => process.exit(0))
})
