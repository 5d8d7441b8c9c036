import { describe, expect, it } from 'vitest'
import { DEFAULT_SCRYPT, makeScryptPasswords } from '../../../src/adapters/crypto/scrypt-passwords.ts'

// Weak parameters keep the test quick; the format and the checks are the same.
const h = makeScryptPasswords({ N: 2 ** 10, r: 8, p: 1 })

describe('scrypt password hashes', () => {
  it('a fresh salt per hash; the right password verifies, another does not; the parameters travel with the hash', async () => {
    const a = await h.hash('rice-field-at-dawn-42')
    const b = await h.hash('rice-field-at-dawn-42')
    expect(a).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
    expect(a).not.toBe(b)
    expect(await h.verify('rice-field-at-dawn-42', a)).toBe(true)
    expect(await h.verify('rice-field-at-dawn-43', a)).toBe(false)
    expect(await h.verify('', a)).toBe(false)
    // A hasher with other defaults still verifies it: the stored parameters count.
    expect(await makeScryptPasswords({ N: 2 ** 11, r: 8, p: 2 }).verify('rice-field-at-dawn-42', a)).toBe(true)
    expect(DEFAULT_SCRYPT).toEqual({ N: 32768, r: 8, p: 3 })
  })

  it('the same text in two Unicode forms is one password (NFC)', async () => {
    const composed = await h.hash('caf\u00e9-password-12')
    expect(await h.verify('cafe\u0301-password-12', composed)).toBe(true)
  })

  it('a malformed or too costly stored hash matches nothing (and costs nothing)', async () => {
    const good = await h.hash('rice-field-at-dawn-42')
    const [, , r, p, salt, key] = good.split('$')
    for (const bad of ['', 'plain', `scrypt$1000$${String(r)}$${String(p)}$${String(salt)}$${String(key)}`, `scrypt$${String(2 ** 22)}$8$1$${String(salt)}$${String(key)}`, `scrypt$1024$64$1$${String(salt)}$${String(key)}`, `bcrypt$1024$8$1$${String(salt)}$${String(key)}`]) {
      expect(await h.verify('rice-field-at-dawn-42', bad), bad).toBe(false)
    }
  })

  it('waste spends a verification and answers nothing', async () => {
    await expect(h.waste('anything')).resolves.toBeUndefined()
  })
})
