import { readFileSync } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { parse, type ScalarTag } from 'yaml'

/**
 * docker-compose.yml and its variant files as Compose reads them, for the tests: YAML with merge keys
 * (`<<`), `!reset` (removes what the files before set), the files merged in order, `${VAR:-default}` /
 * `${VAR:?error}` / `${VAR}` interpolated from a given environment. Mappings merge key by key; any
 * other value replaces the one before (Compose appends some lists, such as ports; the variant files
 * here only add or reset keys, where the two agree).
 */
export type ComposeDoc = { readonly [key: string]: unknown }

const RESET: unique symbol = Symbol('!reset')

const resetTag: ScalarTag = { tag: '!reset', resolve: () => RESET }

export const ROOT = new URL('../../', import.meta.url)

export const readComposeFile = (name: string): unknown => parse(readFileSync(new URL(name, ROOT), 'utf8'), { merge: true, customTags: [resetTag] })

const isMap = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)

const merge = (base: unknown, over: unknown): unknown => {
  if (!isMap(base) || !isMap(over)) return over
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) {
    if (v === RESET) delete out[k]
    else out[k] = k in out ? merge(out[k], v) : v
  }
  return out
}

/** Removes `!reset` markers a first file may hold (nothing to reset there). */
const withoutResets = (u: unknown): unknown => {
  if (Array.isArray(u)) return u.map(withoutResets)
  if (!isMap(u)) return u
  return Object.fromEntries(Object.entries(u).filter(([, v]) => v !== RESET).map(([k, v]) => [k, withoutResets(v)]))
}

/** Compose's interpolation of one string; throws on `${VAR:?message}` with VAR unset, as Compose refuses to start. */
export const interpolate = (text: string, env: Readonly<Record<string, string>>): string =>
  text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$\$/g, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
    if (whole === '$$') return '$'
    const value = name === undefined ? undefined : env[name]
    const unset = value === undefined || (op?.startsWith(':') === true && value === '')
    if (op === ':-' || op === '-') return unset ? (arg ?? '') : (value ?? '')
    if (op === ':?' || op === '?') {
      if (unset) throw new Error(`required variable ${String(name)} is missing a value: ${arg ?? ''}`)
      return value ?? ''
    }
    return value ?? ''
  })

const interpolateAll = (u: unknown, env: Readonly<Record<string, string>>): unknown => {
  if (typeof u === 'string') return interpolate(u, env)
  if (Array.isArray(u)) return u.map((x) => interpolateAll(x, env))
  if (isMap(u)) return Object.fromEntries(Object.entries(u).map(([k, v]) => [k, interpolateAll(v, env)]))
  return u
}

/** The effective configuration of `files` (merged in order, interpolated), as `docker compose config` would see it. */
export const composeConfig = (files: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): ComposeDoc => {
  const [first, ...rest] = files.map(readComposeFile)
  const merged = rest.reduce<unknown>((acc, doc) => merge(acc, doc), withoutResets(first))
  const out = interpolateAll(merged, env)
  if (!isMap(out)) throw new Error(`${files.join(' + ')} is not a mapping`)
  return out
}

/** The part of a service the tests assert on (the schema test checks the whole document). */
export const ComposeService = t.partial({
  image: t.string,
  command: t.array(t.string),
  environment: t.record(t.string, t.string),
  depends_on: t.record(t.string, t.type({ condition: t.string })),
  healthcheck: t.type({ test: t.array(t.string) }),
  profiles: t.array(t.string),
  secrets: t.array(t.string),
  volumes: t.array(t.string),
  ports: t.array(t.string),
  restart: t.string,
  deploy: t.partial({ replicas: t.number, resources: t.partial({ limits: t.partial({ memory: t.string, cpus: t.union([t.string, t.number]) }) }) }),
  logging: t.partial({ driver: t.string, options: t.record(t.string, t.string) }),
})
export type ComposeService = t.TypeOf<typeof ComposeService>

/** The services of a configuration; with `activeProfiles`, only those Compose would start. */
export const servicesOf = (doc: ComposeDoc, activeProfiles: ReadonlyArray<string> = []): Readonly<Record<string, ComposeService>> => {
  const all = doc['services']
  if (!isMap(all)) throw new Error('no services')
  const out: Record<string, ComposeService> = {}
  for (const [name, s] of Object.entries(all)) {
    const decoded = ComposeService.decode(s)
    if (E.isLeft(decoded)) throw new Error(`service ${name}: ${decoded.left.map((e) => e.context.map((c) => c.key).filter((k) => k !== '').join('.')).join(', ')} not as expected`)
    const service = decoded.right
    const profiles = service.profiles ?? []
    if (profiles.length === 0 || profiles.some((p) => activeProfiles.includes(p))) out[name] = service
  }
  return out
}
