import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The CLI the benches start as processes of their own. */
export const SATANG_BIN = fileURLToPath(new URL('../../bin/satang.js', import.meta.url))

export type Started = { readonly url: string; readonly pid: number | undefined; readonly stop: () => Promise<number | null> }

/** Starts `satang sandbox --port 0 --json` and resolves with its URL. */
export const startSandboxProcess = (args: ReadonlyArray<string>): Promise<Started> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SATANG_BIN, 'sandbox', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise<number | null>((done) => child.on('close', done))
    child.on('error', reject)
    let stdout = ''
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
      const line = stdout.split('\n')[0]
      if (!stdout.includes('\n') || line === undefined) return
      let info: unknown
      try {
        info = JSON.parse(line)
      } catch {
        // Thrown here, in a stream's event handler, it would end the whole bench process.
        info = undefined
      }
      if (typeof info === 'object' && info !== null && 'url' in info && typeof info.url === 'string') {
        resolve({
          url: info.url,
          pid: child.pid,
          stop: () => {
            child.kill('SIGTERM')
            return exited
          },
        })
      } else reject(new Error(`unexpected start-up line: ${line}`))
    })
    void exited.then((code) => reject(new Error(`satang sandbox exited (${String(code)}) before it started: ${stderr}`)))
  })

