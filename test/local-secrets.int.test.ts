import { existsSync, readdirSync, statSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { loadOrCreateEd25519Key, loadOrCreateKeyPair, loadOrCreateRolePasswords, loadOrCreateSessionSecret, loadOrCreateToken } from '../src/local-secrets.ts'
import { linkScratch } from './support/link-victims.ts'

/**
 * The secrets `satang up` generates into the data folder (API token, PostgreSQL role passwords, the
 * merchant key pair, the anchor key pair, the console session secret) are written without following a
 * symbolic link: a link planted at a file's name, or as the folder, is refused with the path and the
 * rule, and what it points to is never written. On the real file system.
 */

const { fresh, expectUntouched, victim } = linkScratch('local-secrets', 'victim-0123456789abcdef-0123456789abcdef\n')
const leftText = <A>(r: E.Either<string, A>): string => (E.isLeft(r) ? r.left : 'right')
const LINK = 'is a symbolic link'

/** Each generator, given the folder: what it writes first. */
const generators: ReadonlyArray<{ readonly name: string; readonly file: string; readonly run: (dir: string) => Promise<E.Either<string, unknown>> }> = [
  { name: 'API token', file: 'api-token', run: (d) => loadOrCreateToken(join(d, 'api-token')) },
  { name: 'PostgreSQL role passwords', file: 'postgres-roles.json', run: (d) => loadOrCreateRolePasswords(join(d, 'postgres-roles.json')) },
  { name: 'merchant private key', file: 'merchant-private.pem', run: (d) => loadOrCreateKeyPair(join(d, 'merchant-private.pem'), join(d, 'merchant-public.pem')) },
  { name: 'anchor private key', file: 'anchor-private.pem', run: (d) => loadOrCreateEd25519Key(join(d, 'anchor-private.pem'), true) },
  { name: 'console session secret', file: 'session-secret', run: (d) => loadOrCreateSessionSecret(join(d, 'session-secret')) },
]

describe('generated secrets are never written through a symbolic link', () => {
  it('each is created 0600, whole, with no temporary file left; a second start reuses it', async () => {
    const dir = fresh()
    for (const g of generators) {
      expect(E.isRight(await g.run(dir)), g.name).toBe(true)
      expect(statSync(join(dir, g.file)).mode & 0o777, g.name).toBe(0o600)
      expect(E.isRight(await g.run(dir)), g.name).toBe(true)
    }
    expect(readdirSync(dir).sort()).toEqual(['anchor-private.pem', 'anchor-public.pem', 'api-token', 'merchant-private.pem', 'merchant-public.pem', 'postgres-roles.json', 'session-secret'])
  })

  it.each(generators)('$name: a dangling link at the name is refused, naming it, and its target is not created', async (g) => {
    const dir = fresh()
    const target = join(fresh(), 'created-through-the-link')
    symlinkSync(target, join(dir, g.file))
    const r = await g.run(dir)
    expect(leftText(r)).toContain(JSON.stringify(join(dir, g.file)))
    expect(leftText(r)).toContain(LINK)
    expect(existsSync(target)).toBe(false)
  })

  it.each(generators)('$name: a linked data folder is refused, naming it, and nothing is written into the folder it points at', async (g) => {
    const real = fresh()
    const linked = join(fresh(), 'data')
    symlinkSync(real, linked)
    const r = await g.run(linked)
    expect(leftText(r)).toContain(`${JSON.stringify(linked)}: ${LINK}`)
    expect(readdirSync(real)).toEqual([])
  })

  it('the session secret: a link to an existing file is refused (never read, never written), the file untouched', async () => {
    const dir = fresh()
    const v = victim()
    symlinkSync(v, join(dir, 'session-secret'))
    expect(leftText(await loadOrCreateSessionSecret(join(dir, 'session-secret')))).toContain(`${JSON.stringify(join(dir, 'session-secret'))} ${LINK}`)
    expectUntouched(v)
  })

  it('the public halves: a link at merchant-public.pem or anchor-public.pem is refused, naming it, the file it points at untouched', async () => {
    const dir = fresh()
    const v = victim()
    symlinkSync(v, join(dir, 'merchant-public.pem'))
    const pair = await loadOrCreateKeyPair(join(dir, 'merchant-private.pem'), join(dir, 'merchant-public.pem'))
    expect(leftText(pair)).toContain(`${JSON.stringify(join(dir, 'merchant-public.pem'))}: ${LINK}`)
    expectUntouched(v)
    symlinkSync(v, join(dir, 'anchor-public.pem'))
    const anchor = await loadOrCreateEd25519Key(join(dir, 'anchor-private.pem'), true)
    expect(leftText(anchor)).toContain(`${JSON.stringify(join(dir, 'anchor-public.pem'))}: ${LINK}`)
    expectUntouched(v)
  })
})
