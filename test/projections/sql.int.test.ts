import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { arrayLiteral, unnestParameters, unnestSelect, type Columns } from '../../src/projections/sql.ts'
import { testDatabaseUrl } from '../support/postgres.ts'

/*
 * The read models' batches travel column by column (src/projections/sql.ts): one array literal per
 * column, read back by unnest. Whatever a value holds (quotes, backslashes, braces, commas, control
 * characters, the word NULL, Thai), PostgreSQL must read back exactly the value sent, and a null must
 * stay null; a JSON null in a jsonb column is SQL NULL, as jsonb_to_recordset read it before.
 */

let client: pg.Client

beforeAll(async () => {
  client = new pg.Client({ connectionString: testDatabaseUrl() })
  await client.connect()
})

afterAll(async () => {
  await client.end()
})

const TRICKY = ['', 'NULL', 'null', ' padded ', '{a,b}', 'quote " inside', 'back\\slash', 'ends with \\', '\\n literally', 'tab\there', 'line\nbreak', '\u0001', 'a/b', 'ไทย ฿1,234.56', '"', '\\"']

describe('column batches through unnest (real PostgreSQL)', () => {
  it('a text array literal reads back every value exactly, nulls as nulls', async () => {
    const values = [...TRICKY, null, 'plain']
    const { rows } = await client.query<{ a: Array<string | null> }>('select $1::text[] as a', [arrayLiteral(values)])
    expect(rows[0]?.a).toEqual(values)
  })

  it('property: any strings and nulls survive the round trip', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(fc.string({ unit: fc.constantFrom('a', 'N', 'U', 'L', 'n', 'u', 't', '"', '\\', '/', ',', '{', '}', ' ', '\n', '\t', '\u0001', 'ไ') }), { nil: null }), { maxLength: 40 }), async (values) => {
        const { rows } = await client.query<{ a: Array<string | null> }>('select $1::text[] as a', [arrayLiteral(values)])
        expect(rows[0]?.a).toEqual(values)
      }),
      { numRuns: 150 },
    )
  })

  it('rows of every column type come back as the rows sent, in order', async () => {
    const columns: Columns = [
      ['id', 'text'],
      ['n', 'bigint'],
      ['k', 'integer'],
      ['ok', 'boolean'],
      ['at', 'timestamptz'],
      ['day', 'date'],
      ['u', 'uuid'],
      ['doc', 'jsonb'],
      ['tags', 'text[]'],
    ]
    const rows = [
      { id: 'a "1"', n: '9007199254740993', k: 1, ok: true, at: '2026-11-27T00:00:00.000Z', day: '2026-11-27', u: '00000000-0000-4000-8000-000000000001', doc: { x: 'y "z"', n: [1, 2] }, tags: ['t1', 'with,comma', 'q"uote', ''] },
      { id: 'b\\2', n: null, k: null, ok: false, at: null, day: null, u: null, doc: null, tags: null },
      { id: 'line\nbreak', n: '-1', k: 0, ok: null, at: '2026-01-01T12:34:56.789Z', day: '2000-02-29', u: '00000000-0000-4000-8000-000000000002', doc: { nested: null }, tags: [] },
    ]
    const { rows: back } = await client.query<Record<string, unknown>>(
      `select id, n::text as n, k, ok, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, to_char(day, 'YYYY-MM-DD') as day, u::text as u, doc, tags
         from (${unnestSelect(columns, 1)}) as t`,
      unnestParameters(columns, rows),
    )
    expect(back).toEqual(rows)
  })

  it('a batch of none is no rows', async () => {
    const columns: Columns = [
      ['id', 'text'],
      ['doc', 'jsonb'],
    ]
    const { rows } = await client.query(`select * from (${unnestSelect(columns, 1)}) as t`, unnestParameters(columns, []))
    expect(rows).toEqual([])
  })
})
