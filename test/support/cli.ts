import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const SATANG_BIN = fileURLToPath(new URL('../../bin/satang.js', import.meta.url))

export type CliResult = { readonly code: number | null; readonly stdout: string; readonly stderr: string }

/** Runs the real `satang` CLI in a child process (the same node that runs the tests). */
export const runCli = (args: ReadonlyArray<string>, opts: { stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SATANG_BIN, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(opts.stdin ?? '')
  })
