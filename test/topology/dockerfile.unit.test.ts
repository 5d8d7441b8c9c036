import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { settingDocs } from '../../src/config.ts'
import { ROOT } from './compose-file.ts'
import { DOCKERFILE_TEXT, dockerfileStages, envOf, instructionsOf } from './dockerfile.ts'

/**
 * The image (issue 18): a multi-stage Dockerfile on a pinned slim Node 24, production dependencies
 * only in the final stage, running as a non-root user, a HEALTHCHECK on /healthz, `satang` as the entry
 * point, no secret baked in; and a .dockerignore that keeps secrets and local data out of the context.
 */

const stages = dockerfileStages()
const final = stages.at(-1)
if (final === undefined) throw new Error('the Dockerfile has no stage')

describe('Dockerfile', () => {
  it('is multi-stage, every stage on a pinned slim Node 24 image', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    for (const s of stages) expect(s.image).toMatch(/^node:24\.\d+\.\d+-[a-z]+-slim$/)
  })

  it('runs as a non-root user in the final stage', () => {
    const users = instructionsOf(final, 'USER')
    expect(users.length).toBeGreaterThan(0)
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/)
  })

  it('checks its health on /healthz', () => {
    const checks = instructionsOf(final, 'HEALTHCHECK')
    expect(checks).toHaveLength(1)
    expect(checks[0]).toMatch(/^CMD \["node", "\/app\/scripts\/healthcheck\.ts"\]$/)
    expect(readFileSync(new URL('scripts/healthcheck.ts', ROOT), 'utf8')).toContain('/healthz')
  })

  it('installs production dependencies only in the final stage, and ships the sources and package files the CLI runs from', () => {
    expect(instructionsOf(final, 'RUN').some((r) => /\bnpm ci --omit=dev\b/.test(r))).toBe(true)
    const copies = instructionsOf(final, 'COPY').join('\n')
    for (const needed of ['package.json', 'package-lock.json', './bin', './src', 'scripts/healthcheck.ts']) expect(copies).toContain(needed)
  })

  it('has satang as its entry point (docker run IMAGE up --role api)', () => {
    expect(instructionsOf(final, 'ENTRYPOINT')).toEqual(['["satang"]'])
    expect(instructionsOf(final, 'RUN').some((r) => r.includes('ln -s /app/bin/satang.js /usr/local/bin/satang'))).toBe(true)
  })

  it('bakes in no secret, and every SATANG_* it sets is a documented setting', () => {
    const documented = new Set<string>(settingDocs().map((s) => s.name))
    for (const s of stages) {
      for (const name of Object.keys(envOf(s))) {
        if (name.startsWith('SATANG_')) expect(documented.has(name), name).toBe(true)
        expect(name).not.toMatch(/PASSWORD|TOKEN|SECRET|PRIVATE_KEY/)
      }
    }
    expect(DOCKERFILE_TEXT).not.toMatch(/BEGIN [A-Z ]*PRIVATE KEY|^ARG .*(PASSWORD|TOKEN)/m)
  })
})

describe('.dockerignore', () => {
  const rules = readFileSync(new URL('.dockerignore', ROOT), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
  it('starts from nothing and lets in only what the image needs', () => {
    expect(rules[0]).toBe('*')
    expect(rules.filter((r) => r.startsWith('!')).sort()).toEqual(['!bin/', '!package-lock.json', '!package.json', '!scripts/healthcheck.ts', '!src/', '!tsconfig.json'])
  })
  it('keeps keys, env files and local data out even inside those folders', () => {
    for (const r of ['**/*.pem', '**/.env', '**/.satang']) expect(rules).toContain(r)
  })
})
