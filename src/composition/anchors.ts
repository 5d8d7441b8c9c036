import { createPublicKey, type KeyObject } from 'node:crypto'
import { READ_LIMITS, FileTooLarge, readTextBounded } from '../adapters/os/bounded-read.ts'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { anchorJson, anchorKeyIdOf, writeAnchor, type Anchor } from '../adapters/eventstore/anchors.ts'
import { appendFileNoFollow, refusalText, targetRefusal } from '../adapters/os/safe-write.ts'
import type { AnchorWriter } from '../application/ports/anchors.ts'
import type { Config } from '../config.ts'
import { loadOrCreateEd25519Key } from '../local-secrets.ts'
import type { Logger } from '../logger.ts'
import type { Database } from './database.ts'
import { EVENT_STORE_SCHEMA } from './database.ts'
import { StartupError, dataPath } from './startup.ts'

/** Where the anchor key is: SATANG_ANCHOR_KEY_FILE, else SATANG_DATA_DIR/anchor-private.pem (generated when absent). */
export const anchorKeyPath = (config: Config): string => config.SATANG_ANCHOR_KEY_FILE ?? dataPath(config, 'anchor-private.pem')

const NOT_APPENDED = 'the anchor is in the database but could not be appended to SATANG_ANCHOR_FILE'

/**
 * The anchors of the PostgreSQL event log, signed with the anchor key: written to the database and,
 * with SATANG_ANCHOR_FILE, appended to that file too (one JSON line each; never through a symbolic
 * link, and only to a regular file). Only the scheduler role and `satang reconcile` load the key; the
 * API never does.
 */
export const makeAnchorWriter = async (config: Config, db: Database, log: Logger): Promise<AnchorWriter & { readonly keyPath: string; readonly generated: boolean }> => {
  const file = config.SATANG_ANCHOR_FILE
  // Refused at start too, so that a link planted at the name stops the role instead of only being logged at every anchor.
  const refused = file === undefined ? null : await targetRefusal(file)
  if (refused !== null) throw new StartupError(`SATANG_ANCHOR_FILE: ${refusalText(refused)}`)
  const loaded = await loadOrCreateEd25519Key(anchorKeyPath(config), config.SATANG_ANCHOR_KEY_FILE === undefined)
  if (E.isLeft(loaded)) throw new StartupError(`SATANG_ANCHOR_KEY_FILE: ${loaded.left}`)
  const key = { privateKey: loaded.right.privateKey, keyId: anchorKeyIdOf(loaded.right.privateKey) }
  const anchorLog = log.child({ component: 'anchor' })
  return {
    keyPath: loaded.right.path,
    generated: loaded.right.generated,
    write: (reason, options) =>
      pipe(
        writeAnchor(db.pool, EVENT_STORE_SCHEMA, key, reason, undefined, options),
        TE.chainFirstTaskK((written) => async () => {
          if (written === null || written.existing === true || file === undefined) return
          try {
            const appended = await appendFileNoFollow(file, `${JSON.stringify(anchorJson(written.anchor))}\n`, 0o600)
            if (E.isLeft(appended)) anchorLog.error({ file, rule: appended.left.rule }, `${NOT_APPENDED}: ${refusalText(appended.left)}`)
          } catch (e) {
            anchorLog.error({ err: e, file }, NOT_APPENDED)
          }
        }),
      ),
  }
}

/** The public key anchors are checked with: a given file (public or private PEM), else the configured or generated anchor key's. */
export const anchorPublicKey = async (config: Config, path?: string): Promise<{ readonly key: KeyObject; readonly path: string } | null> => {
  const candidates = path !== undefined ? [path] : [anchorKeyPath(config), dataPath(config, 'anchor-public.pem')]
  for (const p of candidates) {
    const text = await readTextBounded(p, READ_LIMITS.key).catch((e: unknown) => (path === undefined || !(e instanceof FileTooLarge) ? null : e))
    if (text instanceof FileTooLarge) throw new StartupError(`cannot read the anchor key ${JSON.stringify(p)} (${text.message})`)
    if (text === null) {
      if (path !== undefined) throw new StartupError(`cannot read the anchor key ${JSON.stringify(p)}`)
      continue
    }
    try {
      return { key: createPublicKey(text), path: p }
    } catch {
      throw new StartupError(`${JSON.stringify(p)} is not a PEM key`)
    }
  }
  return null
}

export type { Anchor }
