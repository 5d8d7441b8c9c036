import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { createFileNoFollow, ensureDirectory, refusalText, writeFileNoFollow } from '../adapters/os/safe-write.ts'
import { loadPrivateKey } from '../domain/gateway/signing.ts'

/** The URL path under which the sandbox serves the gateway public key (PEM). */
export const GATEWAY_PUBLIC_KEY_PATH = '/_sandbox/keys/gateway.pem'

export const GATEWAY_PRIVATE_KEY_FILE = 'gateway-private.pem'
export const GATEWAY_PUBLIC_KEY_FILE = 'gateway-public.pem'

export type GatewayKeys = {
  readonly privateKey: KeyObject
  readonly publicKeyPem: string
  readonly privateKeyPath: string
  /** Where the public key was written (beside a generated private key), if it was. */
  readonly publicKeyPath?: string
  readonly generated: boolean
}

const errorCode = (e: unknown): string => (e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'unreadable')

export const publicPemOf = (privateKey: KeyObject): string => createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString()

const readKey = async (path: string): Promise<E.Either<string, KeyObject>> => {
  let pem: string
  try {
    pem = await readFile(path, 'utf8')
  } catch (e) {
    const code = errorCode(e)
    return E.left(`cannot read gateway private key ${JSON.stringify(path)}: ${code === 'ENOENT' ? 'no such file' : code}`)
  }
  return E.mapLeft((k: { readonly message: string }) => `gateway private key ${JSON.stringify(path)}: ${k.message}`)(loadPrivateKey(pem))
}

/**
 * The gateway's signing key. With `file`, that key (it must exist). Without, `<dataDir>/gateway-private.pem`,
 * generated (RSA-2048) with its public key beside it when absent, so a restart keeps the same key.
 */
export const loadOrCreateGatewayKey = async (file: string | undefined, dataDir: string): Promise<E.Either<string, GatewayKeys>> => {
  if (file !== undefined) {
    const key = await readKey(file)
    return E.map((privateKey: KeyObject): GatewayKeys => ({ privateKey, publicKeyPem: publicPemOf(privateKey), privateKeyPath: file, generated: false }))(key)
  }
  const privateKeyPath = join(dataDir, GATEWAY_PRIVATE_KEY_FILE)
  const publicKeyPath = join(dataDir, GATEWAY_PUBLIC_KEY_FILE)
  const existing = await readKey(privateKeyPath)
  if (E.isRight(existing)) {
    const publicKeyPem = publicPemOf(existing.right)
    // The public key file is a convenience (it is also served over HTTP): a read-only folder is no
    // error, and neither is a link at its name, which is left alone (never written through).
    const written = await writeFileNoFollow(publicKeyPath, publicKeyPem).then(E.isRight, () => false)
    return E.right({ privateKey: existing.right, publicKeyPem, privateKeyPath, ...(written ? { publicKeyPath } : {}), generated: false })
  }
  const failed = (reason: string): E.Either<string, GatewayKeys> => E.left(`gateway private key in ${JSON.stringify(dataDir)}: ${reason}`)
  try {
    const folder = await ensureDirectory(dirname(privateKeyPath))
    if (E.isLeft(folder)) return failed(`cannot write it: ${refusalText(folder.left)}`)
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const privatePem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    const publicKeyPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString()
    // Never overwrite a key file that exists but could not be read, nor write through a link.
    const created = await createFileNoFollow(privateKeyPath, privatePem, 0o600)
    if (E.isLeft(created)) return failed(`cannot write it: ${refusalText(created.left)}`)
    if (created.right === 'exists') return failed(existing.left)
    const wrotePublic = await writeFileNoFollow(publicKeyPath, publicKeyPem)
    if (E.isLeft(wrotePublic)) return failed(`cannot write its public key: ${refusalText(wrotePublic.left)}`)
    return E.right({ privateKey: pair.privateKey, publicKeyPem, privateKeyPath, publicKeyPath, generated: true })
  } catch (e) {
    return failed(`cannot write it: ${errorCode(e)}`)
  }
}
