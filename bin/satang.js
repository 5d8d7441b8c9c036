#!/usr/bin/env node
// The satang CLI. From a git checkout it runs the TypeScript sources directly (Node >= 22.18 strips
// types natively, so `npx satang` works right after `npm ci` with no build step); an installed
// package, where Node refuses to strip types under node_modules, runs the compiled `dist/`.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(`satang needs Node.js >= 22.18 (this is ${process.version}); see README "Requirements"\n`)
  process.exit(1)
}
const compiled = new URL('../dist/cli.js', import.meta.url)
const fromSource = fileURLToPath(new URL('../src', import.meta.url)).includes('/node_modules/') === false
const entry = fromSource || !existsSync(compiled) ? new URL('../src/cli.ts', import.meta.url) : compiled
const { main } = await import(entry.href)
await main(process.argv)
