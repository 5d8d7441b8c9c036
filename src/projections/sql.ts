/**
 * SQL the read models share: a batch of rows travels as one JSON array parameter and is read back with
 * `jsonb_to_recordset`, so a batch is one statement whatever its size.
 */

/** Column name and SQL type, in the table's insert order. */
export type Columns = ReadonlyArray<readonly [name: string, type: string]>

/** `select <columns> from jsonb_to_recordset(<parameter>::jsonb) as r(<column> <type>, …)`. */
export const recordsetSelect = (columns: Columns, parameter: string): string =>
  `select ${columns.map(([n]) => n).join(', ')} from jsonb_to_recordset(${parameter}::jsonb) as r(${columns.map(([n, ty]) => `${n} ${ty}`).join(', ')})`

/** Inserts the rows of `parameter` into `table` (qualified), replacing every column of a row whose `key` exists. */
export const upsertFromRecordset = (table: string, columns: Columns, key: string, parameter: string): string =>
  `insert into ${table} (${columns.map(([n]) => n).join(', ')})
   ${recordsetSelect(columns, parameter)}
   on conflict (${key}) do update set ${columns
     .map(([n]) => n)
     .filter((n) => n !== key)
     .map((n) => `${n} = excluded.${n}`)
     .join(', ')}`

/** An instant as a recordset value (ISO-8601 UTC text), or null. */
export const isoOrNull = (d: Date | null): string | null => (d === null ? null : d.toISOString())
