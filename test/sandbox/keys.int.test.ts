import { existsSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { GATEWAY_PRIVATE_KEY_FILE, GATEWAY_PUBLIC_KEY_FILE, loadOrCreateGatewayKey } from '../../src/sandbox/keys.ts'
import { linkScratch } from '../support/link-victims.ts'

/**
 * The sandbox's gateway key pair in its data folder: generated when absent, the public half rewritten
 * at every start. Neither is written through a symbolic link; on the real file system.
 */

const { fresh, expectUntouched, victim } = linkScratch('sandbox-keys')
const leftText = <A>(r: E.Either<string, A>): string => (E.isLeft(r) ? r.left : 'right')

describe('the gateway key files are never written through a symbolic link', () => {
  it('generates the pair (private 0600) and reuses it, leaving no temporary file', async () => {
    const dir = fresh()
    const first = await loadOrCreateGatewayKey(undefined, dir)
    expect(first).toMatchObject({ _tag: 'Right', right: { generated: true, publicKeyPath: join(dir, GATEWAY_PUBLIC_KEY_FILE) } })
    expect(statSync(join(dir, GATEWAY_PRIVATE_KEY_FILE)).mode & 0o777).toBe(0o600)
    expect(await loadOrCreateGatewayKey(undefined, dir)).toMatchObject({ _tag: 'Right', right: { generated: false, publicKeyPath: join(dir, GATEWAY_PUBLIC_KEY_FILE) } })
    expect(readdirSync(dir).sort()).toEqual([GATEWAY_PRIVATE_KEY_FILE, GATEWAY_PUBLIC_KEY_FILE])
  })

  it('a dangling link at the private key is refused, naming it; its target is not created', async () => {
    const dir = fresh()
    const target = join(fresh(), 'created-through-the-link')
    symlinkSync(target, join(dir, GATEWAY_PRIVATE_KEY_FILE))
    const r = await loadOrCreateGatewayKey(undefined, dir)
    expect(leftText(r)).toContain(`${JSON.stringify(join(dir, GATEWAY_PRIVATE_KEY_FILE))}: is a symbolic link`)
    expect(existsSync(target)).toBe(false)
  })

  it('a link at the public key is refused when the pair is generated, naming it; the file it points at untouched', async () => {
    const dir = fresh()
    const v = victim()
    symlinkSync(v, join(dir, GATEWAY_PUBLIC_KEY_FILE))
    const r = await loadOrCreateGatewayKey(undefined, dir)
    expect(leftText(r)).toContain(`${JSON.stringify(join(dir, GATEWAY_PUBLIC_KEY_FILE))}: is a symbolic link`)
    expectUntouched(v)
  })

  it('at a later start a link at the public key is left alone (the key is still served over HTTP), the file it points at untouched', async () => {
    const dir = fresh()
    expect(E.isRight(await loadOrCreateGatewayKey(undefined, dir))).toBe(true)
    const v = victim()
    rmSync(join(dir, GATEWAY_PUBLIC_KEY_FILE))
    symlinkSync(v, join(dir, GATEWAY_PUBLIC_KEY_FILE))
    const r = await loadOrCreateGatewayKey(undefined, dir)
    expect(r).toMatchObject({ _tag: 'Right', right: { generated: false } })
    expect(E.isRight(r) && 'publicKeyPath' in r.right).toBe(false)
    expect(E.isRight(r) && r.right.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----/)
    expectUntouched(v)
  })

  it('a linked data folder is refused, naming it; nothing is written into the folder it points at', async () => {
    const real = fresh()
    const linked = join(fresh(), 'sandbox')
    symlinkSync(real, linked)
    expect(leftText(await loadOrCreateGatewayKey(undefined, linked))).toContain(`${JSON.stringify(linked)}: is a symbolic link`)
    expect(readdirSync(real)).toEqual([])
  })
})
