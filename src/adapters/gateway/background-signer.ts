import { constants, sign, type KeyObject } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { Canonicalizer } from '../../domain/gateway/canonical.ts'

/**
 * Signs off the event loop. Both signers give the signature `signCanonical` computes (the same key,
 * canonical string and RSASSA-PKCS1-v1_5 / SHA-256), as standard base64; only where the work runs differs.
 */
export type BackgroundSigner = { readonly sign: (fields: Readonly<Record<string, unknown>>) => Promise<string> }

/**
 * `crypto.sign` with a callback: the RSA work runs on libuv's thread pool. Starting each job still
 * costs the main thread a fair part of a signature (preparing the key and the job: about a fifth of
 * it, issue 28's profile of a reconciliation run), which is why a busy caller uses `makeWorkerSigner`.
 */
export const makeBackgroundSigner = (canonicalizer: Canonicalizer, privateKey: KeyObject): BackgroundSigner => ({
  sign: (fields) =>
    new Promise((resolve, reject) => {
      sign('sha256', Buffer.from(canonicalizer.canonicalize(fields), 'utf8'), { key: privateKey, padding: constants.RSA_PKCS1_PADDING }, (err, signature) => {
        if (err !== null) reject(err)
        else resolve(signature.toString('base64'))
      })
    }),
})

// The worker's whole program (CommonJS, evaluated): the key arrives once as PKCS#8 DER, then each
// message is [id, canonical string] and each answer [id, base64 signature] or [id, null, error message].
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const { createPrivateKey, sign, constants } = require('node:crypto')
const key = createPrivateKey({ key: Buffer.from(workerData.der), format: 'der', type: 'pkcs8' })
parentPort.on('message', (m) => {
  try {
    parentPort.postMessage([m[0], sign('sha256', Buffer.from(m[1], 'utf8'), { key, padding: constants.RSA_PKCS1_PADDING }).toString('base64')])
  } catch (e) {
    parentPort.postMessage([m[0], null, e instanceof Error ? e.message : String(e)])
  }
})
`

type Pending = { readonly resolve: (s: string) => void; readonly reject: (e: Error) => void }

/**
 * Signs on a few worker threads (default: as many as the machine's cores, at most 4), started at the
 * first signature: the main thread only canonicalises the fields and passes a string each way, so a
 * process sending many requests (a reconciliation run) keeps its event loop for answers and the log.
 * A worker that fails is replaced at the next signature; its signatures in flight are rejected (a
 * query is then retried by the client's policy). Workers are referenced only while they have work,
 * so they never keep a process alive.
 */
export const makeWorkerSigner = (canonicalizer: Canonicalizer, privateKey: KeyObject, threads: number = Math.max(1, Math.min(4, availableParallelism()))): BackgroundSigner => {
  const der = privateKey.export({ format: 'der', type: 'pkcs8' })
  type Slot = { worker: Worker | null; readonly pending: Map<number, Pending> }
  const slots: Slot[] = Array.from({ length: threads }, () => ({ worker: null, pending: new Map() }))
  let nextId = 0

  const start = (slot: Slot): Worker => {
    const worker = new Worker(WORKER, { eval: true, workerData: { der } })
    worker.unref()
    const fail = (e: Error): void => {
      if (slot.worker === worker) slot.worker = null
      for (const p of slot.pending.values()) p.reject(e)
      slot.pending.clear()
    }
    worker.on('message', (m: [number, string | null, string?]) => {
      const p = slot.pending.get(m[0])
      if (p === undefined) return
      slot.pending.delete(m[0])
      if (slot.pending.size === 0) worker.unref()
      if (m[1] === null) p.reject(new Error(`signing failed: ${m[2] ?? 'unknown error'}`))
      else p.resolve(m[1])
    })
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`the signing worker stopped (exit code ${String(code)})`)))
    slot.worker = worker
    return worker
  }

  return {
    sign: (fields) =>
      new Promise((resolve, reject) => {
        // The least busy worker.
        let slot = slots[0] as Slot
        for (const s of slots) if (s.pending.size < slot.pending.size) slot = s
        const worker = slot.worker ?? start(slot)
        const id = nextId++
        if (slot.pending.size === 0) worker.ref()
        slot.pending.set(id, { resolve, reject })
        worker.postMessage([id, canonicalizer.canonicalize(fields)])
      }),
  }
}
