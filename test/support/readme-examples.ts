import { readFileSync } from 'node:fs'

/**
 * The example request bodies of docs/merchant-api.md, each marked `<!-- example-body: METHOD PATH -->` right
 * before its ```json block, so tests can send them exactly as documented.
 */
export const readmeExampleBodies = (): ReadonlyMap<string, Record<string, unknown>> => {
  const readme = readFileSync(new URL('../../docs/merchant-api.md', import.meta.url), 'utf8')
  const bodies = new Map<string, Record<string, unknown>>()
  for (const m of readme.matchAll(/<!-- example-body: ([A-Z]+ \S+) -->\n```json\n([\s\S]*?)\n```/g)) {
    const [, route = '', json = ''] = m
    const body: unknown = JSON.parse(json)
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error(`docs/merchant-api.md example body of ${route} is not a JSON object`)
    bodies.set(route, { ...body })
  }
  return bodies
}
