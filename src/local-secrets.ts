import { createPrivateKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto'
import { constants } from 'node:fs'
import { open, readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { createFileNoFollow, ensureDirectory, refusalText, writeFileNoFollow } from './adapters/os/safe-write.ts'
import { generateToken } from './adapters/http/api-tokens.ts'
import { loadPrivateKey } from './domain/gateway/signing.ts'

/**
 * Secrets `satang up` keeps in the data folder when none are configured, so that a fresh machine gets
 * a working system: the merchant key pair (signs requests to the built-in sandbox), the default API
 * token and the console's session secret. Files are created with mode 0600 and never overwritten; their contents are never printed or
 * logged, only their paths. Nothing is written through a symbolic link (src/adapters/os/safe-write.ts).
 */

const errorCode = (e: unknown): string => (e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'unreadable')

const readIfExists = async (path: string): Promise<E.Either<string, string | undefined>> => {
  try {
    return E.right(await readFile(path, 'utf8'))
  } catch (e) {
    return errorCode(e) === 'ENOENT' ? E.right(undefined) : E.left(`cannot read ${JSON.stringify(path)}: ${errorCode(e)}`)
  }
}

/** Creates `path` (and its folder); left when anything is there already (a link, or a file that appeared meanwhile). */
const writeNew = async (path: string, text: string, mode: number): Promise<E.Either<string, void>> => {
  try {
    const folder = await ensureDirectory(dirname(path))
    if (E.isLeft(folder)) return E.left(`cannot write ${refusalText(folder.left)}`)
    const created = await createFileNoFollow(path, text, mode)
    if (E.isLeft(created)) return E.left(`cannot write ${refusalText(created.left)}`)
    return created.right === 'created' ? E.right(undefined) : E.left(`cannot write ${JSON.stringify(path)}: EEXIST`)
  } catch (e) {
    return E.left(`cannot write ${JSON.stringify(path)}: ${errorCode(e)}`)
  }
}

/** Writes (or replaces) the public half of a generated key, never through a link. */
const writePublic = async (path: string, pem: string): Promise<E.Either<string, void>> => {
  try {
    const wrote = await writeFileNoFollow(path, pem)
    return E.isLeft(wrote) ? E.left(`cannot write ${refusalText(wrote.left)}`) : E.right(undefined)
  } catch (e) {
    return E.left(`cannot write ${JSON.stringify(path)}: ${errorCode(e)}`)
  }
}

export type LocalKeyPair = { readonly privateKey: KeyObject; readonly privateKeyPath: string; readonly publicKeyPath: string; readonly generated: boolean }

/** The RSA-2048 key pair at `privateKeyPath` (PKCS#8 PEM) and `publicKeyPath` (SPKI PEM), generated when absent. */
export const loadOrCreateKeyPair = async (privateKeyPath: string, publicKeyPath: string): Promise<E.Either<string, LocalKeyPair>> => {
  const existing = await readIfExists(privateKeyPath)
  if (E.isLeft(existing)) return existing
  if (existing.right !== undefined) {
    const key = loadPrivateKey(existing.right)
    return E.isLeft(key) ? E.left(`${JSON.stringify(privateKeyPath)}: ${key.left.message}`) : E.right({ privateKey: key.right, privateKeyPath, publicKeyPath, generated: false })
  }
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const wrote = await writeNew(privateKeyPath, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600)
  if (E.isLeft(wrote)) return wrote
  const wrotePublic = await writePublic(publicKeyPath, pair.publicKey.export({ type: 'spki', format: 'pem' }).toString())
  if (E.isLeft(wrotePublic)) return wrotePublic
  return E.right({ privateKey: pair.privateKey, privateKeyPath, publicKeyPath, generated: true })
}

export type LocalToken = { readonly token: string; readonly path: string; readonly generated: boolean }

/** The API token kept in `path` (one line), generated when absent. */
export const loadOrCreateToken = async (path: string): Promise<E.Either<string, LocalToken>> => {
  const existing = await readIfExists(path)
  if (E.isLeft(existing)) return existing
  if (existing.right !== undefined) {
    const token = existing.right.trim()
    return token.length >= 16 ? E.right({ token, path, generated: false }) : E.left(`${JSON.stringify(path)} does not hold a token of at least 16 characters`)
  }
  const token = generateToken()
  const wrote = await writeNew(path, `${token}\n`, 0o600)
  return E.isLeft(wrote) ? wrote : E.right({ token, path, generated: true })
}

export type LocalRolePasswords = { readonly owner: string; readonly service: string; readonly path: string; readonly generated: boolean }

/**
 * The passwords of embedded PostgreSQL's owner and service roles, kept in `path` (JSON, 0600),
 * generated when absent. Embedded PostgreSQL listens on 127.0.0.1 only; the passwords keep other
 * local users from connecting as satang's roles.
 */
export const loadOrCreateRolePasswords = async (path: string): Promise<E.Either<string, LocalRolePasswords>> => {
  const existing = await readIfExists(path)
  if (E.isLeft(existing)) return existing
  if (existing.right !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(existing.right)
    } catch {
      return E.left(`${JSON.stringify(path)} is not the JSON satang wrote ({ owner, service })`)
    }
    const p = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {}
    const owner = p['owner']
    const service = p['service']
    return typeof owner === 'string' && owner.length >= 16 && typeof service === 'string' && service.length >= 16
      ? E.right({ owner, service, path, generated: false })
      : E.left(`${JSON.stringify(path)} must hold { "owner": "…", "service": "…" }, each at least 16 characters`)
  }
  const passwords = { owner: generateToken(), service: generateToken() }
  const wrote = await writeNew(path, `${JSON.stringify(passwords)}\n`, 0o600)
  return E.isLeft(wrote) ? wrote : E.right({ ...passwords, path, generated: true })
}

export type LocalSigningKey = { readonly privateKey: KeyObject; readonly path: string; readonly publicKeyPath: string | null; readonly generated: boolean }

/**
 * The Ed25519 anchor key at `path` (PKCS#8 PEM), generated when absent (`generate`) with its public
 * key beside it (`anchor-public.pem` for `anchor-private.pem`).
 */
export const loadOrCreateEd25519Key = async (path: string, generate: boolean): Promise<E.Either<string, LocalSigningKey>> => {
  const existing = await readIfExists(path)
  if (E.isLeft(existing)) return existing
  if (existing.right !== undefined) {
    let key: KeyObject
    try {
      key = createPrivateKey(existing.right)
    } catch {
      return E.left(`${JSON.stringify(path)} is not a PEM private key`)
    }
    return key.asymmetricKeyType === 'ed25519' ? E.right({ privateKey: key, path, publicKeyPath: null, generated: false }) : E.left(`${JSON.stringify(path)} is not an Ed25519 key (it is ${key.asymmetricKeyType ?? 'unknown'})`)
  }
  if (!generate) return E.left(`cannot read ${JSON.stringify(path)}: ENOENT`)
  const pair = generateKeyPairSync('ed25519')
  const wrote = await writeNew(path, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600)
  if (E.isLeft(wrote)) return wrote
  const publicKeyPath = path.replace(/private(\.pem)?$/, 'public.pem')
  if (publicKeyPath !== path) {
    const wrotePublic = await writePublic(publicKeyPath, pair.publicKey.export({ type: 'spki', format: 'pem' }).toString())
    if (E.isLeft(wrotePublic)) return wrotePublic
  }
  return E.right({ privateKey: pair.privateKey, path, publicKeyPath: publicKeyPath === path ? null : publicKeyPath, generated: true })
}

export type LocalSessionSecret = { readonly secret: Buffer; readonly path: string; readonly generated: boolean }

/** Characters of a session secret at least (32 random bytes are written as 43). */
export const MIN_SESSION_SECRET_LENGTH = 32

/** Reads a file that is not a symlink (`O_NOFOLLOW`); undefined when it does not exist. */
const readOwnFile = async (path: string): Promise<E.Either<string, string | undefined>> => {
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW)
    try {
      return E.right(await handle.readFile({ encoding: 'utf8' }))
    } finally {
      await handle.close()
    }
  } catch (e) {
    const code = errorCode(e)
    if (code === 'ENOENT') return E.right(undefined)
    return E.left(code === 'ELOOP' ? `${JSON.stringify(path)} is a symbolic link: satang reads its own secret only from a plain file` : `cannot read ${JSON.stringify(path)}: ${code}`)
  }
}

/**
 * The secret that signs console sessions, kept in `path` (one line, 0600), generated when absent: 32
 * random bytes, so that nothing in the configuration computes it. Every api process that shares the
 * data folder shares it; another installation has its own.
 */
export const loadOrCreateSessionSecret = async (path: string): Promise<E.Either<string, LocalSessionSecret>> => {
  const existing = await readOwnFile(path)
  if (E.isLeft(existing)) return existing
  if (existing.right !== undefined) {
    const secret = existing.right.trim()
    return secret.length >= MIN_SESSION_SECRET_LENGTH ? E.right({ secret: Buffer.from(secret, 'utf8'), path, generated: false }) : E.left(`${JSON.stringify(path)} does not hold a session secret of at least ${String(MIN_SESSION_SECRET_LENGTH)} characters`)
  }
  const secret = randomBytes(32).toString('base64url')
  const wrote = await writeNew(path, `${secret}\n`, 0o600)
  if (E.isRight(wrote)) return E.right({ secret: Buffer.from(secret, 'utf8'), path, generated: true })
  // Another api process of this installation wrote it first: theirs is the one.
  const again = await readOwnFile(path)
  if (E.isLeft(again) || again.right === undefined || again.right.trim().length < MIN_SESSION_SECRET_LENGTH) return wrote
  return E.right({ secret: Buffer.from(again.right.trim(), 'utf8'), path, generated: false })
}
