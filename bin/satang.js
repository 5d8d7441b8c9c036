#!/usr/bin/env node
// The satang CLI. From a git checkout it runs the TypeScript sources directly (Node >= 22.18 strips
// types natively, so `npx satang` works right after `npm ci` with no build step); an installed
// package, where Node refuses to strip types under node_modules, runs the compiled `dist/`.
//
// Older Node (18, 20, 22 before 22.18): `npm ci` installs the pinned Node 24 of the registry package
// node-linux-<arch> (an optional dependency, see docs/development.md "Node versions"). npm scripts and
// npx put it first on PATH; run any other way (`node bin/satang.js`, a symlink on PATH), this file hands
// the command over to it. Plain JavaScript that parses on Node 18, so the message below is what an old
// Node shows rather than a syntax error.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import module from 'node:module'
import { fileURLToPath } from 'node:url'
import { MINIMUM_NODE, recentEnough } from './node-version.js'

if (!recentEnough(process.versions.node)) {
  const bundled = fileURLToPath(new URL(`../node_modules/node-${process.platform}-${process.arch}/bin/node`, import.meta.url))
  if (!existsSync(bundled)) {
    process.stderr.write(
      `satang needs Node.js >= ${MINIMUM_NODE} (this is ${process.version}) and found no Node 24 of its own at ${bundled}; ` +
        `run \`npm ci\` in the satang folder (it installs one on linux x64), or put Node >= ${MINIMUM_NODE} first on PATH (README "Requirements")\n`,
    )
    process.exit(1)
  }
  // The child shares the terminal: Ctrl-C reaches it directly. A signal sent to this process alone
  // (kill, a supervisor's SIGTERM) is passed on, and this process ends the way the child ends.
  const child = spawn(bundled, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  })
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    } else process.exit(code ?? 1)
  })
} else {
  // Node's compile cache keeps each module as compiled (type-stripped, V8 code) between runs, which
  // halves start-up; in the checkout's node_modules/.cache (a read-only install simply goes without it;
  // NODE_COMPILE_CACHE, or NODE_DISABLE_COMPILE_CACHE=1, overrides it). Node checks every entry against
  // its source, so an edited file is compiled afresh.
  if (process.env.NODE_COMPILE_CACHE === undefined) module.enableCompileCache?.(fileURLToPath(new URL('../node_modules/.cache/satang-compile', import.meta.url)))
  // `up`, `project` and `relay` run with a heap sized for a container (bin/heap.js).
  const { restartWithHeapFlags } = await import('./heap.js')
  restartWithHeapFlags(process.argv)
  const compiled = new URL('../dist/cli.js', import.meta.url)
  const fromSource = fileURLToPath(new URL('../src', import.meta.url)).includes('/node_modules/') === false
  const entry = fromSource || !existsSync(compiled) ? new URL('../src/cli.ts', import.meta.url) : compiled
  const { main } = await import(entry.href)
  await main(process.argv)
}
