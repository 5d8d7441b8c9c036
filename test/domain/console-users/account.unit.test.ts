import { describe, expect, it } from 'vitest'
import { MAX_NAME_LENGTH, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, nameViolations, passwordViolations, roleViolations, rolesOfClaim, ROLE_SCOPES, scopesOfRoles } from '../../../src/domain/console-users/account.ts'

describe('console account names', () => {
  it('accepts lowercase names, e-mail addresses and the longest allowed', () => {
    for (const name of ['somchai', 'a', 'finance.lead', 'somchai@shop.example', 'user_2-b', '9lives', 'a'.repeat(MAX_NAME_LENGTH)]) expect(nameViolations(name), name).toEqual([])
  })

  it('names the field and every rule broken', () => {
    expect(nameViolations('')).toEqual([{ path: 'name', rule: 'must not be empty' }])
    expect(nameViolations('a'.repeat(MAX_NAME_LENGTH + 1), 'NAME')).toEqual([{ path: 'NAME', rule: `must be at most ${String(MAX_NAME_LENGTH)} characters` }])
    const charset = 'must be lowercase letters a-z, digits, dot, dash, underline or @, starting with a letter or digit'
    for (const bad of ['Somchai', 'som chai', '.dot', '-dash', 'สมชาย', 'a:b', 'a/b', 'x\u0000']) expect(nameViolations(bad), bad).toEqual([{ path: 'name', rule: charset }])
    expect(nameViolations(`-${'a'.repeat(MAX_NAME_LENGTH)}`).map((v) => v.rule)).toEqual([`must be at most ${String(MAX_NAME_LENGTH)} characters`, charset])
  })
})

describe('console passwords', () => {
  it('accepts 12 to 256 characters, counted as a person counts them (Thai and emoji too)', () => {
    expect(passwordViolations('x'.repeat(MIN_PASSWORD_LENGTH), null)).toEqual([])
    expect(passwordViolations('ก'.repeat(MIN_PASSWORD_LENGTH), 'somchai')).toEqual([])
    expect(passwordViolations('🔑'.repeat(MAX_PASSWORD_LENGTH), null)).toEqual([])
  })

  it('refuses short, long, control characters and the name inside, every rule at once', () => {
    expect(passwordViolations('x'.repeat(MIN_PASSWORD_LENGTH - 1), null)).toEqual([{ path: 'password', rule: 'must be at least 12 characters' }])
    expect(passwordViolations('🔑'.repeat(MAX_PASSWORD_LENGTH + 1), null)).toEqual([{ path: 'password', rule: 'must be at most 256 characters' }])
    expect(passwordViolations('a long\tpassword here', null, '--password-file')).toEqual([{ path: '--password-file', rule: 'must not hold control characters (tab, newline, …)' }])
    expect(passwordViolations('Somchai\n', 'somchai').map((v) => v.rule)).toEqual(['must be at least 12 characters', 'must not hold control characters (tab, newline, …)', 'must not contain the user name'])
    expect(passwordViolations('my-SOMCHAI-password', 'somchai')).toEqual([{ path: 'password', rule: 'must not contain the user name' }])
  })
})

describe('roles', () => {
  it('map to the API scopes: finance reads and acknowledges, auditor reads and audits, admin has all', () => {
    expect(ROLE_SCOPES.finance).toEqual(['read', 'reconcile:write'])
    expect(ROLE_SCOPES.auditor).toEqual(['read', 'audit'])
    expect(ROLE_SCOPES.admin).toEqual(['payments:write', 'read', 'audit', 'reconcile:write'])
    expect(scopesOfRoles(['finance', 'auditor'])).toEqual(['read', 'audit', 'reconcile:write'])
    expect(scopesOfRoles([])).toEqual([])
  })

  it('a role is one of three, named in the error', () => {
    expect(roleViolations('finance')).toEqual([])
    expect(roleViolations('Finance', '--role')).toEqual([{ path: '--role', rule: 'must be one of finance, auditor, admin' }])
  })

  it('an OpenID claim grants the roles it names, as a string or a list; anything else grants none', () => {
    expect(rolesOfClaim('finance')).toEqual(['finance'])
    expect(rolesOfClaim('auditor finance')).toEqual(['finance', 'auditor'])
    expect(rolesOfClaim('admin,auditor')).toEqual(['auditor', 'admin'])
    expect(rolesOfClaim(['auditor', 'sales', 7])).toEqual(['auditor'])
    expect(rolesOfClaim('financed')).toEqual([])
    expect(rolesOfClaim(undefined)).toEqual([])
    expect(rolesOfClaim({ role: 'admin' })).toEqual([])
  })
})

describe('account rules at their defaults', () => {
  it('given no user name, when a password holds the text "null", then it breaks no rule', () => {
    expect(passwordViolations('a nullable passphrase', null)).toEqual([])
  })
  it('given no path, when a role is unknown, then the violation names the field role', () => {
    expect(roleViolations('boss')).toEqual([{ path: 'role', rule: 'must be one of finance, auditor, admin' }])
  })
})
