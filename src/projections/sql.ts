/**
 * SQL the read models share: a batch of rows travels column by column, one parameter per column (a
 * PostgreSQL array literal, or a JSON array for `jsonb` columns), read back by `unnest` side by side,
 * so a batch is one statement whatever its size. (Columns as arrays cost the server a fraction of
 * what one JSON array of row objects read by `jsonb_to_recordset` did: no key repeated per row, no
 * jsonb tree built and searched per value; issue 28.)
 */

/** Column name and SQL type, in the table's insert order. */
export type Columns = ReadonlyArray<readonly [name: string, type: string]>

/** A row as the projections build it: column name → value (null or absent: SQL NULL). */
export type Row = Readonly<Record<string, unknown>>

const JSONB = 'jsonb'
const isArrayType = (type: string): boolean => type.endsWith('[]')

/** One element of an array literal, as `array_in` reads it: always quoted, `"` and `\` escaped. */
const element = (v: unknown): string => {
  if (v === null || v === undefined) return 'NULL'
  const s = typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v) : String(v as number | boolean | bigint)
  return s.includes('"') || s.includes('\\') ? `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"` : `"${s}"`
}

// A JSON escape other than \" and \\ (a control character, a lone surrogate): array_in would read it otherwise.
const OTHER_ESCAPE = /\\[bfnrtu]/

/**
 * `{…}`: a one-dimensional array literal of `values`. Fast path: JSON's array of strings, numbers,
 * booleans and nulls is the array literal but for its brackets when it holds no escape beyond \" and
 * \\ (escaped alike in both; array_in reads an unquoted `null` as NULL). A backslash followed by one
 * of those letters in the text itself only sends the batch down the slow path.
 */
const literalOf = (values: ReadonlyArray<unknown>, scalars: boolean): string => {
  if (scalars) {
    const json = JSON.stringify(values)
    if (!json.includes('\\') || !OTHER_ESCAPE.test(json)) return `{${json.slice(1, -1)}}`
  }
  let out = '{'
  for (let i = 0; i < values.length; i++) out += (i === 0 ? '' : ',') + element(values[i])
  return `${out}}`
}

/** `{…}`: a one-dimensional array literal of `values`. */
export const arrayLiteral = (values: ReadonlyArray<unknown>): string => {
  let scalars = true
  for (let i = 0; i < values.length && scalars; i++) {
    const v = values[i]
    scalars = v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
  }
  return literalOf(values, scalars)
}

/**
 * The parameter of one column: an array literal of its values over `rows`; for `jsonb` a JSON array;
 * for an array type (`text[]`) an array literal of each row's own array literal (unnest would flatten a
 * two-dimensional array: each element is cast back per row, see `unnestSelect`).
 */
const columnParameter = (name: string, type: string, rows: ReadonlyArray<Row>): string => {
  const values: unknown[] = new Array(rows.length)
  let scalars = true
  for (let i = 0; i < rows.length; i++) {
    const v = (rows[i] as Row)[name] ?? null
    values[i] = v
    if (scalars && v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') scalars = false
  }
  if (type === JSONB) return JSON.stringify(values)
  if (isArrayType(type)) return arrayLiteral(values.map((v) => (v === null ? null : arrayLiteral(v as ReadonlyArray<unknown>))))
  return literalOf(values, scalars)
}

/** The parameters for `unnestSelect(columns, first)`: one per column, in order. */
export const unnestParameters = (columns: Columns, rows: ReadonlyArray<Row>): string[] => columns.map(([name, type]) => columnParameter(name, type, rows))

/**
 * `select <columns> from rows from (unnest($first::type[]), …) as <alias>(<columns>)`: the rows of
 * `unnestParameters(columns, rows)` passed from parameter `$first` on. A JSON null in a `jsonb` column is
 * SQL NULL (as `jsonb_to_recordset` read it).
 */
export const unnestSelect = (columns: Columns, first: number, alias = 'r'): string => {
  const from = columns.map(([, type], i) => {
    const p = `$${String(first + i)}`
    if (type === JSONB) return `jsonb_array_elements(${p}::jsonb)`
    if (isArrayType(type)) return `unnest(${p}::text[])`
    return `unnest(${p}::${type}[])`
  })
  const select = columns.map(([name, type]) => (type === JSONB ? `nullif(${alias}.${name}, 'null'::jsonb) as ${name}` : isArrayType(type) ? `${alias}.${name}::${type} as ${name}` : `${alias}.${name}`))
  return `select ${select.join(', ')} from rows from (${from.join(', ')}) as ${alias}(${columns.map(([n]) => n).join(', ')})`
}

/** Inserts the rows passed from `$first` on into `table` (qualified), replacing every column of a row whose `key` exists. */
export const upsertFromUnnest = (table: string, columns: Columns, key: string, first: number): string =>
  `insert into ${table} (${columns.map(([n]) => n).join(', ')})
   ${unnestSelect(columns, first)}
   on conflict (${key}) do update set ${columns
     .map(([n]) => n)
     .filter((n) => n !== key)
     .map((n) => `${n} = excluded.${n}`)
     .join(', ')}`

/** An instant as a row value (ISO-8601 UTC text), or null. */
export const isoOrNull = (d: Date | null): string | null => (d === null ? null : d.toISOString())
