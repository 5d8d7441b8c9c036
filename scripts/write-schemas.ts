// `npm run schemas`: writes schemas/ (the JSON Schemas of the Kafka messages) from the event codecs.
// test/adapters/kafka/schemas.unit.test.ts fails when the committed files differ from what this writes.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { publishedSchemas, schemaText } from '../src/adapters/kafka/schemas.ts'

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'schemas')
mkdirSync(dir, { recursive: true })
const schemas = publishedSchemas()
for (const stale of readdirSync(dir).filter((f) => f.endsWith('.schema.json') && !schemas.has(f))) {
  rmSync(join(dir, stale))
  process.stdout.write(`removed schemas/${stale}\n`)
}
for (const [file, schema] of schemas) writeFileSync(join(dir, file), schemaText(schema))
process.stdout.write(`wrote ${String(schemas.size)} schemas to schemas/\n`)
