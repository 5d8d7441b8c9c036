import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { escapeHtml, html, jsonScriptData, raw } from '../../../../src/adapters/http/console/html.ts'
import { makeSessions, sameCsrf, sessionCookie } from '../../../../src/adapters/http/console/session.ts'
import type { EndedSessions } from '../../../../src/platform/postgres/console-sessions.ts'

describe('the html template escapes by default', () => {
  it('text, numbers and lists are escaped; Html is kept', () => {
    const evil = '<script>alert("x")</script>&\'`'
    expect(html`<p title="${evil}">${evil}</p>`.text).toBe('<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;&#96;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;&#96;</p>')
    expect(html`<ul>${['<a>', 1, 2n, null, undefined, false].map((x) => html`<li>${x}</li>`)}</ul>`.text).toBe('<ul><li>&lt;a&gt;</li><li>1</li><li>2</li><li></li><li></li><li></li></ul>')
    expect(html`${raw('<b>')}${html`<i>${'<'}</i>`}`.text).toBe('<b><i>&lt;</i>')
  })

  it('no string escapes to anything holding < > " \' or a raw &', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const out = escapeHtml(s)
        expect(out).not.toMatch(/[<>"'`]/)
        expect(out.replace(/&(amp|lt|gt|quot|#39|#96);/g, '')).not.toContain('&')
      }),
    )
  })

  it('JSON for a script data block cannot close the element', () => {
    const data = { d: '</script><script>alert(1)</script>', e: '<!--', f: '\u2028' }
    const text = jsonScriptData(data).text
    expect(text).not.toMatch(/[<>]/)
    expect(JSON.parse(text)).toEqual(data)
  })
})

describe('console sessions', () => {
  const tokens = [{ name: 'ops', token: 'ops-token-0123456789abcdef', scopes: ['read' as const] }]
  const now = new Date('2026-11-25T03:00:00Z')
  // The store of signed-out sessions is PostgreSQL in satang (test/adapters/http/console/sessions.int.test.ts); a set here.
  const endedIn = (set: Set<string>): EndedSessions => ({ hasEnded: async (id) => set.has(id), end: async (id) => void set.add(id) })
  const secret = randomBytes(32)

  it('a session reads back; a changed byte, an expired session, changed tokens or another secret do not', async () => {
    const sessions = makeSessions({ secret, tokens, ended: endedIn(new Set()) })
    const { value, session } = sessions.issue({ name: 'ops', token: 'ops-token-0123456789abcdef', scopes: ['read'] }, now)
    expect(value).not.toContain('ops-token')
    expect(await sessions.read(value, now)).toEqual(session)
    const tampered = `${value.slice(0, 5)}${value[5] === 'A' ? 'B' : 'A'}${value.slice(6)}`
    expect(await sessions.read(tampered, now)).toBeUndefined()
    expect(await sessions.read(value, new Date(now.getTime() + 9 * 3600_000))).toBeUndefined()
    expect(await makeSessions({ secret, tokens: [{ ...tokens[0]!, token: 'another-token-0123456789' }], ended: endedIn(new Set()) }).read(value, now)).toBeUndefined()
    expect(await makeSessions({ secret: randomBytes(32), tokens, ended: endedIn(new Set()) }).read(value, now)).toBeUndefined()
    expect(sameCsrf(session.csrf, session.csrf)).toBe(true)
    expect(sameCsrf(session.csrf, `${session.csrf}x`)).toBe(false)
    expect(sessionCookie(value, false)).toMatch(/; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=28800$/)
    expect(sessionCookie(null, true)).toMatch(/Secure; Max-Age=0$/)
  })

  it('a session that was ended is refused; a short secret is refused at start', async () => {
    const ended = new Set<string>()
    const sessions = makeSessions({ secret, tokens, ended: endedIn(ended) })
    const { value, session } = sessions.issue(tokens[0]!, now)
    await sessions.end(session)
    expect(ended.has(session.id)).toBe(true)
    expect(await sessions.read(value, now)).toBeUndefined()
    expect(() => makeSessions({ secret: Buffer.alloc(16), tokens, ended: endedIn(new Set()) })).toThrow(/at least 32 bytes/)
  })
})
