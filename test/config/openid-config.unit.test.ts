import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { decodeConfig } from '../../src/config.ts'

const full = {
  SATANG_OIDC_ISSUER_URL: 'https://login.example.com/realms/shop',
  SATANG_OIDC_CLIENT_ID: 'satang-console',
  SATANG_OIDC_CLIENT_SECRET_FILE: '/run/secrets/oidc',
  SATANG_OIDC_REDIRECT_URL: 'https://satang.example.com/console/openid/callback',
}

const problems = (env: Record<string, string>): ReadonlyArray<string> => {
  const d = decodeConfig(env)
  return E.isLeft(d) ? d.left.map((e) => `${e.variable}: ${e.rule}`) : []
}

describe('the single sign-on settings', () => {
  it('all four together are a configuration; the claim and scopes have defaults', () => {
    const d = decodeConfig(full)
    expect(E.isRight(d) && [d.right.SATANG_OIDC_ROLE_CLAIM, d.right.SATANG_OIDC_SCOPES]).toEqual(['satang_roles', 'openid profile email'])
    expect(problems({})).toEqual([])
  })

  it('a missing one is named; one without the issuer too', () => {
    expect(problems({ ...full, SATANG_OIDC_CLIENT_ID: '', SATANG_OIDC_REDIRECT_URL: '' })).toEqual(['SATANG_OIDC_CLIENT_ID: is required when SATANG_OIDC_ISSUER_URL is set', 'SATANG_OIDC_REDIRECT_URL: is required when SATANG_OIDC_ISSUER_URL is set'])
    expect(problems({ SATANG_OIDC_CLIENT_ID: 'x' })).toEqual(['SATANG_OIDC_CLIENT_ID: needs SATANG_OIDC_ISSUER_URL (single sign-on is off without it)'])
  })

  it('http only to a provider on this machine; the callback path and the openid scope are required', () => {
    expect(problems({ ...full, SATANG_OIDC_ISSUER_URL: 'http://login.example.com' })).toEqual(['SATANG_OIDC_ISSUER_URL: must be https (http only for a provider on this machine: 127.0.0.1, localhost)'])
    expect(problems({ ...full, SATANG_OIDC_ISSUER_URL: 'http://127.0.0.1:9000' })).toEqual([])
    expect(problems({ ...full, SATANG_OIDC_REDIRECT_URL: 'https://satang.example.com/callback', SATANG_OIDC_SCOPES: 'profile email' })).toEqual([
      'SATANG_OIDC_REDIRECT_URL: must end in /console/openid/callback (the console route that takes the answer)',
      'SATANG_OIDC_SCOPES: must include openid',
    ])
  })
})
