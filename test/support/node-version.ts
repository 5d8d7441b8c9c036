import { MINIMUM_NODE, recentEnough } from '../../bin/node-version.js'

/**
 * The tests run satang's TypeScript as Node runs it (type stripping, Node >= 22.18), and spawn
 * `process.execPath` with `--import` of `.ts` files. Under an older Node first on PATH (the machine's
 * Node 20 when vitest is started as `node_modules/.bin/vitest`) they would fail one by one with
 * unrelated errors, or wait for a child that never wrote its trace; the configs refuse at once instead.
 */
export const requireRecentNode = (): void => {
  if (recentEnough(process.versions.node)) return
  throw new Error(
    `the tests need Node >= ${MINIMUM_NODE} and this is ${process.version} (${process.execPath}): run them through npm test, npm run test:… or npx vitest, ` +
      'which put the Node 24 that npm ci installs first on PATH (docs/development.md "Node versions")',
  )
}
