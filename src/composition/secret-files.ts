import { readTextBounded, readFailureText, READ_LIMITS } from '../adapters/os/bounded-read.ts'
import * as E from 'fp-ts/lib/Either.js'
import { ApiTokens } from '../adapters/http/api-tokens.ts'
import type { OpenIdSettings } from '../adapters/http/console/openid.ts'
import type { Config } from '../config.ts'
import { withKafkaSecurityFiles } from './kafka-security.ts'
import { loadOrCreateSessionSecret, MIN_SESSION_SECRET_LENGTH, type LocalSessionSecret } from '../local-secrets.ts'

/**
 * Settings whose secret sits in a file (a Docker or Compose secret under /run/secrets) rather than in
 * the environment, where `docker inspect` and process listings would show it: the API tokens
 * (`SATANG_API_TOKENS_FILE`), the database passwords (`SATANG_DATABASE_PASSWORD_FILE`,
 * `SATANG_DATABASE_OWNER_PASSWORD_FILE`) and the console's session secret (`SATANG_SESSION_SECRET_FILE`).
 * Read once at start. A problem (left) names the variable and the file, never the content.
 */
const readSecret = async (variable: string, path: string): Promise<E.Either<string, string>> => {
  let text: string
  try {
    text = await readTextBounded(path, READ_LIMITS.secret)
  } catch (e) {
    return E.left(`${variable}: cannot read ${JSON.stringify(path)} (${readFailureText(e)})`)
  }
  // A secret file usually ends with a newline (echo, most editors); the secret itself never does.
  const secret = text.replace(/\r?\n$/, '')
  return secret.trim() === '' ? E.left(`${variable}: ${JSON.stringify(path)} is empty`) : E.right(secret)
}

/** The configuration with the secrets of the `*_FILE` settings read in, or what is wrong with them. */
export const withSecretFiles = async (config: Config): Promise<E.Either<string, Config>> => {
  let out = config
  if (config.SATANG_API_TOKENS_FILE !== undefined) {
    const path = config.SATANG_API_TOKENS_FILE
    const text = await readSecret('SATANG_API_TOKENS_FILE', path)
    if (E.isLeft(text)) return text
    const decoded = ApiTokens.decode(text.right)
    if (E.isLeft(decoded)) return E.left(`SATANG_API_TOKENS_FILE: the tokens in ${JSON.stringify(path)} are invalid: ${[...new Set(decoded.left.map((e) => e.message ?? 'is invalid'))].join('; ')}`)
    out = { ...out, SATANG_API_TOKENS: decoded.right }
  }
  if (config.SATANG_DATABASE_PASSWORD_FILE !== undefined && config.SATANG_DATABASE_URL !== undefined) {
    const password = await readSecret('SATANG_DATABASE_PASSWORD_FILE', config.SATANG_DATABASE_PASSWORD_FILE)
    if (E.isLeft(password)) return password
    const url = new URL(config.SATANG_DATABASE_URL)
    url.password = encodeURIComponent(password.right)
    out = { ...out, SATANG_DATABASE_URL: url.toString() }
  }
  if (config.SATANG_DATABASE_OWNER_PASSWORD_FILE !== undefined && config.SATANG_DATABASE_OWNER_URL !== undefined) {
    const password = await readSecret('SATANG_DATABASE_OWNER_PASSWORD_FILE', config.SATANG_DATABASE_OWNER_PASSWORD_FILE)
    if (E.isLeft(password)) return password
    const url = new URL(config.SATANG_DATABASE_OWNER_URL)
    url.password = encodeURIComponent(password.right)
    out = { ...out, SATANG_DATABASE_OWNER_URL: url.toString() }
  }
  return withKafkaSecurityFiles(out)
}

/**
 * The secret that signs console sessions: SATANG_SESSION_SECRET_FILE (the same file for every api
 * process of the installation, at least 32 characters), else `generatedPath` in the data folder,
 * generated on first start. A problem (left) names the variable and the file, never the content.
 */
export const sessionSecretOf = async (config: Pick<Config, 'SATANG_SESSION_SECRET_FILE'>, generatedPath: string): Promise<E.Either<string, LocalSessionSecret>> => {
  const path = config.SATANG_SESSION_SECRET_FILE
  if (path === undefined) {
    const local = await loadOrCreateSessionSecret(generatedPath)
    return E.isLeft(local) ? E.left(`SATANG_DATA_DIR: the console session secret: ${local.left}`) : local
  }
  const text = await readSecret('SATANG_SESSION_SECRET_FILE', path)
  if (E.isLeft(text)) return text
  const secret = text.right.trim()
  if (secret.length < MIN_SESSION_SECRET_LENGTH) return E.left(`SATANG_SESSION_SECRET_FILE: ${JSON.stringify(path)} must hold at least ${String(MIN_SESSION_SECRET_LENGTH)} characters (for example: openssl rand -hex 32)`)
  return E.right({ secret: Buffer.from(secret, 'utf8'), path, generated: false })
}

/** The console's single sign-on settings (null when SATANG_OIDC_ISSUER_URL is unset), its client secret read from its file. */
export const openIdSettingsOf = async (
  config: Pick<Config, 'SATANG_OIDC_ISSUER_URL' | 'SATANG_OIDC_CLIENT_ID' | 'SATANG_OIDC_CLIENT_SECRET_FILE' | 'SATANG_OIDC_REDIRECT_URL' | 'SATANG_OIDC_ROLE_CLAIM' | 'SATANG_OIDC_SCOPES'>,
): Promise<E.Either<string, OpenIdSettings | null>> => {
  const issuer = config.SATANG_OIDC_ISSUER_URL
  // decodeConfig requires the other three once the issuer is set.
  if (issuer === undefined || config.SATANG_OIDC_CLIENT_ID === undefined || config.SATANG_OIDC_CLIENT_SECRET_FILE === undefined || config.SATANG_OIDC_REDIRECT_URL === undefined) return E.right(null)
  const secret = await readSecret('SATANG_OIDC_CLIENT_SECRET_FILE', config.SATANG_OIDC_CLIENT_SECRET_FILE)
  if (E.isLeft(secret)) return secret
  return E.right({
    issuer: new URL(issuer),
    clientId: config.SATANG_OIDC_CLIENT_ID,
    clientSecret: secret.right.trim(),
    redirectUrl: new URL(config.SATANG_OIDC_REDIRECT_URL),
    roleClaim: config.SATANG_OIDC_ROLE_CLAIM,
    scopes: config.SATANG_OIDC_SCOPES,
  })
}
