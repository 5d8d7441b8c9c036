import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import type { PasswordHasher } from '../../application/ports/console-accounts.ts'

/*
 * Console passwords as scrypt hashes (node:crypto), stored as `scrypt$<N>$<r>$<p>$<salt>$<hash>`
 * (salt and hash base64url): 16 random bytes of salt per hash, 32 bytes of hash, N = 2^15, r = 8,
 * p = 3 (32 MiB of memory at a time; one of the equivalent settings OWASP's password storage cheat
 * sheet gives as its minimum for scrypt, beside N = 2^17 with p = 1). The parameters are read from
 * each stored hash, so stronger ones can come later without a migration.
 */

export type ScryptParams = { readonly N: number; readonly r: number; readonly p: number }

export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 15, r: 8, p: 3 }

const KEY_LENGTH = 32
const SALT_LENGTH = 16
const FORMAT = /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{32,128})$/

const derive = (password: string, salt: Buffer, params: ScryptParams, length: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r + 1024 * 1024 }
    scrypt(password.normalize('NFC'), salt, length, options, (err, key) => (err === null ? resolve(key) : reject(err)))
  })

/** Parameters a stored hash may name: no stored text can make a verification cost more than this. */
const acceptable = (p: ScryptParams): boolean => p.N >= 2 ** 10 && p.N <= 2 ** 20 && (p.N & (p.N - 1)) === 0 && p.r >= 1 && p.r <= 32 && p.p >= 1 && p.p <= 16

export const makeScryptPasswords = (params: ScryptParams = DEFAULT_SCRYPT): PasswordHasher => {
  const hash = async (password: string): Promise<string> => {
    const salt = randomBytes(SALT_LENGTH)
    const key = await derive(password, salt, params, KEY_LENGTH)
    return `scrypt$${String(params.N)}$${String(params.r)}$${String(params.p)}$${salt.toString('base64url')}$${key.toString('base64url')}`
  }
  const verify = async (password: string, stored: string): Promise<boolean> => {
    const m = FORMAT.exec(stored)
    if (m === null) return false
    const p = { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) }
    if (!acceptable(p)) return false
    const expected = Buffer.from(m[5] ?? '', 'base64url')
    const key = await derive(password, Buffer.from(m[4] ?? '', 'base64url'), p, expected.length)
    return timingSafeEqual(key, expected)
  }
  let dummy: Promise<string> | undefined
  return {
    hash,
    verify,
    waste: async (password) => {
      dummy ??= hash('no account has this password')
      await verify(password, await dummy)
    },
  }
}
