import type * as t from 'io-ts'
import { checkedRecord, onlyFields, recordOf } from '../domain/gateway/checked-record.ts'

/**
 * A JSON object codec of the control API: `required` and `optional` fields, and any other key is an
 * error ("is not a field of …"), so a misspelt option is reported instead of silently ignored.
 */
export const closedRecord = <R extends t.Props, P extends t.Props>(name: string, required: R, optional: P) => {
  const record = recordOf(name, { required, optional })
  return checkedRecord(record.codec, [onlyFields(() => ({ fields: record.fields, owner: name }))])
}
