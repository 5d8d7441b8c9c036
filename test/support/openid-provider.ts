import { createServer, type Server } from 'node:http'
import { randomBytes } from 'node:crypto'
import Provider from 'oidc-provider'

/**
 * A real OpenID Connect provider (oidc-provider, a certified implementation) on 127.0.0.1, for the
 * console's single sign-on tests: one confidential client (`satang-console`, client_secret_basic,
 * authorization code with PKCE), its development login and consent pages (any login name; the
 * password is not checked), and the claim `satang_roles` of each account from `roles` (released with
 * the `openid` scope, in the userinfo answer).
 */
export type OpenIdProvider = {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  readonly close: () => Promise<void>
}

export const startOpenIdProvider = async (o: { readonly redirectUri: string; readonly roles: Readonly<Record<string, ReadonlyArray<string>>> }): Promise<OpenIdProvider> => {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the provider has no port')
  const issuer = `http://127.0.0.1:${String(address.port)}`
  const clientSecret = randomBytes(24).toString('base64url')
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'satang-console', client_secret: clientSecret, redirect_uris: [o.redirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    claims: { openid: ['sub', 'satang_roles'], profile: ['preferred_username'], email: ['email'] },
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, preferred_username: sub, email: `${sub}@shop.example`, satang_roles: [...(o.roles[sub] ?? [])] }),
    }),
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    features: { devInteractions: { enabled: true } },
  })
  const handle = provider.callback()
  server.on('request', (req, res) => void handle(req, res))
  return {
    issuer,
    clientId: 'satang-console',
    clientSecret,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
