import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isLintProbe } from '../support/lint-probe.ts'

/**
 * A PostgreSQL pitfall that broke anchors and the audit trail: `select seq::text … order by seq` sorts
 * by the output column (the cast keeps the name `seq`), so as text: '10' before '9'. This guard reads
 * every SQL text in src/ (template literals, with `${NAME}` column lists of the same file filled in)
 * and refuses an ORDER BY (or DISTINCT ON) that names, unqualified, a column the select list casts.
 * Order by the table's column through an alias instead (`from t a … order by a.seq`).
 */

const SRC = join(import.meta.dirname, '..', '..', 'src')

const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? filesUnder(join(dir, d.name)) : d.name.endsWith('.ts') && !isLintProbe(d.name) ? [join(dir, d.name)] : []))

/** `const NAME = \`…\`` of a file, to fill `${NAME}` in its queries. */
const constantsOf = (source: string): ReadonlyMap<string, string> => new Map([...source.matchAll(/const (\w+) = `([^`]*)`/g)].map((m) => [m[1] ?? '', m[2] ?? '']))

/** Names the select list turns into an output column of the same name by a cast (`x::text`, `e.x::bigint`). */
const castNames = (sql: string): ReadonlySet<string> => new Set([...sql.matchAll(/(?<![\w"])(?:\w+\.)?(\w+)::\w+(?:::\w+)*(?!\s*\)|\s+as\b|\w)/gi)].map((m) => m[1] ?? ''))

const KEYWORDS = /^(asc|desc|nulls|first|last|collate|using|C)$/i

/** Unqualified names in each ORDER BY list (up to LIMIT, OFFSET, FOR UPDATE, the RETURNING of an INSERT … SELECT … ORDER BY, a closing parenthesis or the end) and DISTINCT ON list of `sql`. */
const orderNames = (sql: string): ReadonlyArray<string> => {
  const lists = [...sql.matchAll(/\border by\b([^)]*?)(?=\blimit\b|\boffset\b|\bfor update\b|\breturning\b|\)|;|$)/gi), ...sql.matchAll(/\bdistinct on\s*\(([^)]*)\)/gi)].map((m) => m[1] ?? '')
  return lists.flatMap((list) => [...list.matchAll(/(?<![\w.'"$])([a-z_]\w*)(?![\w.(])/gi)].map((n) => n[1] ?? '').filter((n) => !KEYWORDS.test(n)))
}

export const unsafeOrderings = (source: string): ReadonlyArray<string> => {
  const constants = constantsOf(source)
  const found: string[] = []
  for (const m of source.matchAll(/`([^`]*)`/g)) {
    const sql = (m[1] ?? '').replace(/\$\{(\w+)\}/g, (all, name: string) => constants.get(name) ?? all)
    if (!/\border by\b|\bdistinct on\b/i.test(sql) || !/\bselect\b/i.test(sql)) continue
    const casts = castNames(sql)
    for (const n of orderNames(sql)) if (casts.has(n)) found.push(`${n} in: ${sql.replace(/\s+/g, ' ').slice(0, 160)}`)
  }
  return found
}

describe('queries order by table columns, not by text casts of them', () => {
  it('finds the pitfall where it is (the check itself can fail)', () => {
    expect(unsafeOrderings('const q = `select seq::text, reason from anchors order by seq`')).toHaveLength(1)
    expect(unsafeOrderings('const C = `seq::text, reason`\nconst q = `select ${C} from anchors order by seq desc limit 1`')).toHaveLength(1)
    expect(unsafeOrderings('const q = `select distinct on (stream_name) stream_name, stream_revision::text from e order by stream_name, stream_revision desc`')).toHaveLength(1)
    expect(unsafeOrderings('const q = `select a.seq::text, reason from anchors a order by a.seq`')).toEqual([])
    expect(unsafeOrderings('const q = `select sum(x)::text as total from t order by day`')).toEqual([])
    // An INSERT … SELECT … ORDER BY's list ends where its RETURNING begins.
    expect(unsafeOrderings('const q = `with i as (insert into e (a) select q.a from q order by q.ord returning a, position) select i.position::text from i`')).toEqual([])
    expect(unsafeOrderings('const q = `insert into e (a) select position::text from q order by position returning a`')).toHaveLength(1)
  })

  it('no query in src/ orders by an unqualified name its select list casts', () => {
    const found = filesUnder(SRC).flatMap((f) => unsafeOrderings(readFileSync(f, 'utf8')).map((u) => `${relative(SRC, f)}: ${u}`))
    expect(found).toEqual([])
  })
})
