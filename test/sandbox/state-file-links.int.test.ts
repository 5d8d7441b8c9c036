import { readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeSandboxClock } from '../../src/sandbox/clock.ts'
import { journalPathOf, loadStateFile, openStateFile } from '../../src/sandbox/state-file.ts'
import { makeSandboxStore } from '../../src/sandbox/state.ts'
import { silentLogger } from '../../src/logger.ts'
import { MERCHANT_ID } from './support.ts'
import { linkScratch } from '../support/link-victims.ts'

/**
 * `--state FILE`: neither the snapshot nor its journal is read, written or chmod'ed through a symbolic
 * link. A link at either name, or as their folder, stops the sandbox at start naming the path and the
 * rule; a link planted while it runs makes the next snapshot fail the same way; the file a link points
 * at is never touched. On the real file system.
 */

const VICTIM_TEXT = 'root:x:0:0:victim\n'
const { fresh, expectUntouched, victim } = linkScratch('state-links', VICTIM_TEXT)
const open = (statePath: string) => openStateFile({ store: makeSandboxStore(), clock: makeSandboxClock(), log: silentLogger() }, statePath)
const refusal = (path: string): RegExp => new RegExp(`${JSON.stringify(path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: is a symbolic link`)

describe('the sandbox state files are never used through a symbolic link', () => {
  it('a link at FILE is refused at start, naming it; the file it points at is neither written, chmod\'ed nor quoted', async () => {
    const dir = fresh()
    const v = victim()
    const statePath = join(dir, 'state.json')
    symlinkSync(v, statePath)
    const failure = await open(statePath).then(
      () => 'opened',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    )
    expect(failure).toMatch(refusal(statePath))
    expect(failure).not.toContain('root:x')
    expectUntouched(v)
    expect(readdirSync(dir)).toEqual(['state.json'])
  })

  it('a link at FILE.journal (to a file, or dangling) is refused at start, naming it; nothing is written through it', async () => {
    const dir = fresh()
    const v = victim()
    const statePath = join(dir, 'state.json')
    symlinkSync(v, journalPathOf(statePath))
    await expect(open(statePath)).rejects.toThrow(refusal(journalPathOf(statePath)))
    expectUntouched(v)
    const dangling = join(fresh(), 'state.json')
    const target = join(fresh(), 'created-through-the-link')
    symlinkSync(target, journalPathOf(dangling))
    await expect(open(dangling)).rejects.toThrow(refusal(journalPathOf(dangling)))
    expect(() => statSync(target)).toThrow(/ENOENT/)
  })

  it('a linked folder is refused at start, naming it; nothing is written into the folder it points at', async () => {
    const real = fresh()
    const linked = join(fresh(), 'sandbox')
    symlinkSync(real, linked)
    await expect(open(join(linked, 'state.json'))).rejects.toThrow(refusal(linked))
    expect(readdirSync(real)).toEqual([])
  })

  it('a link planted at FILE while the sandbox runs fails the next snapshot, naming it; the file it points at untouched', async () => {
    const dir = fresh()
    const v = victim()
    const statePath = join(dir, 'state.json')
    const store = makeSandboxStore()
    const file = await openStateFile({ store, clock: makeSandboxClock(), log: silentLogger() }, statePath)
    store.putOrder({ kind: 'direct', merchantId: MERCHANT_ID, merchantOrderId: 'LINK-1', orderId: String(store.nextSequence()), status: 'WP', amount: '1.00', requestedAmount: '1.00', currency: 'THB', description: 'x', createTime: '2030-01-01 10:00:00', createdAtMs: 0 })
    await file.durable()
    rmSync(statePath)
    symlinkSync(v, statePath)
    // Closing writes the whole state as the snapshot.
    await expect(file.close()).rejects.toThrow(/the sandbox state could not be saved/)
    expectUntouched(v)
    expect(readFileSync(journalPathOf(statePath), 'utf8')).toContain('LINK-1')
  })

  it('a link waiting at a name the snapshot was once written aside to (FILE.<pid>.tmp) is never written through', async () => {
    const dir = fresh()
    const v = victim()
    const statePath = join(dir, 'state.json')
    symlinkSync(v, `${statePath}.${String(process.pid)}.tmp`)
    const file = await open(statePath)
    await file.close()
    expectUntouched(v)
    expect(await loadStateFile(statePath)).toMatchObject({ _tag: 'Right', right: { format: 'satang-sandbox-state-v1' } })
    expect(statSync(statePath).mode & 0o777).toBe(0o600)
  })
})
