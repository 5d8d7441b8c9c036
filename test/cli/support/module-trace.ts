import { registerHooks } from 'node:module'
import { writeFileSync } from 'node:fs'

/**
 * Loaded with `node --import` by test/cli/lazy-help.int.test.ts: records every module of the project's
 * src/ that the process loads and, at exit, writes the list (one path a line, relative to src/) to the
 * file named by SATANG_TEST_MODULE_TRACE.
 */
const out = process.env['SATANG_TEST_MODULE_TRACE'] ?? ''
const loaded = new Set<string>()
registerHooks({
  load: (url, context, nextLoad) => {
    const at = url.indexOf('/src/')
    if (url.startsWith('file:') && at >= 0 && !url.includes('/node_modules/')) loaded.add(url.slice(at + 5))
    return nextLoad(url, context)
  },
})
process.on('exit', () => {
  if (out !== '') writeFileSync(out, [...loaded].sort().join('\n'))
})
