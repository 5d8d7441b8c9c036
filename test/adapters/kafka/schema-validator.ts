import { readdirSync, readFileSync } from 'node:fs'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { KafkaMessage } from 'cloudevents'

/** The committed schemas/ folder of the repository. */
export const SCHEMAS_DIR = new URL('../../../schemas/', import.meta.url)

/** The committed schema files: file name → text. */
export const committedSchemaFiles = (): ReadonlyMap<string, string> =>
  new Map(
    readdirSync(SCHEMAS_DIR)
      .filter((f) => f.endsWith('.schema.json'))
      .sort()
      .map((f) => [f, readFileSync(new URL(f, SCHEMAS_DIR), 'utf8')]),
  )

/** Validators compiled from the committed schemas (as a consumer would use them), by file name. */
export const committedValidators = (): ReadonlyMap<string, ValidateFunction> => {
  const ajv = new Ajv({ allErrors: true, strict: true })
  addFormats.default(ajv)
  return new Map([...committedSchemaFiles()].map(([file, text]) => [file, ajv.compile(JSON.parse(text) as object)]))
}

/** Errors of `value` against the validator of `file` ([] when valid). */
export const schemaErrors = (validators: ReadonlyMap<string, ValidateFunction>, file: string, value: unknown): ReadonlyArray<string> => {
  const validate = validators.get(file)
  if (validate === undefined) return [`no schema ${file} in schemas/`]
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
}

/** A consumed message as the CloudEvents SDK's Kafka binding reads it (`Kafka.toEvent`). */
export const asCloudEventsMessage = (m: { readonly key: string; readonly value: string; readonly headers: Readonly<Record<string, string>>; readonly timestamp: string }): KafkaMessage<string> => ({
  headers: { ...m.headers },
  key: m.key,
  value: m.value,
  body: m.value,
  timestamp: m.timestamp,
})
