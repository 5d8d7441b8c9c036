import { createHmac, randomBytes } from 'node:crypto'
import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { announcementKeyOf, blockersOf, lastPosition, macOf, readAnnouncement, verdictOf, type Announcement, type FollowState, type KnownEmpty } from '../../../src/adapters/eventstore/announcements.ts'

/**
 * Issue 24, live delivery: what a subscriber believes of a notification's payload, and when it may
 * deliver an announced transaction's events without reading (the rules in announcements.ts).
 */

const key = randomBytes(32)
const sign = (body: string, k: Buffer = key): string => createHmac('sha256', k).update(body, 'utf8').digest('hex') + body

const row = (position: string, stream = 's-1'): unknown[] => [
  position,
  stream,
  '0',
  '7b0a3a52-39f1-4b1e-9a39-3c8f0f9a0001',
  'ThingHappened',
  1,
  { n: 1, text: 'บาท' },
  { correlationId: 'c' },
  '1767225600000',
]

const body = (over: Record<string, unknown> = {}): string => JSON.stringify({ t: '100', x: '101', r: [], m: ['90', '12'], e: [row('13'), row('15', 's-2')], ...over })

describe('readAnnouncement', () => {
  it('reads a payload signed with the key: the transaction, the snapshot, the last older event, and the rows in the shape of a read', () => {
    const a = readAnnouncement(sign(body({ r: ['95', '97'] })), key)
    expect(a).toEqual({
      tx: 100n,
      xmax: 101n,
      newestRunning: 97n,
      running: [95n, 97n],
      lastOlderTx: 90n,
      rows: [
        ['100', ...row('13')],
        ['100', ...row('15', 's-2')],
      ],
    })
    expect(a === undefined ? undefined : lastPosition(a)).toBe(15n)
  })

  it('reads the same with the key prepared once (announcementKeyOf) as with its bytes', () => {
    const payload = sign(body())
    expect(readAnnouncement(payload, announcementKeyOf(key))).toEqual(readAnnouncement(payload, key))
    expect(readAnnouncement(payload, announcementKeyOf(key))).toBeDefined()
    expect(readAnnouncement(payload, announcementKeyOf(randomBytes(32)))).toBeUndefined()
  })

  it('a prepared key never shows its bytes: JSON and util.inspect (what a log line of an object holding it would print) name it only', () => {
    const prepared = announcementKeyOf(key)
    for (const shown of [JSON.stringify({ prepared }), inspect({ prepared }, { depth: 5 }), String(JSON.stringify(prepared))]) {
      expect(shown).toContain('[announcement key]')
      for (const secret of [key, prepared.ipad, prepared.opad]) {
        expect(shown).not.toContain(secret.toString('hex'))
        expect(shown).not.toContain(secret.toString('base64'))
      }
      expect(shown).not.toMatch(/<Buffer|"type":"Buffer"/)
    }
  })

  it('checks with the HMAC-SHA-256 of RFC 2104: the same as createHmac for any body and key, one after another', () => {
    // The empty body; bodies that just fit the reused scratch buffer (4 KiB with the pad) and just do
    // not, in that order (the first key crosses the edge); longer multi-byte text; keys of 32 bytes,
    // of the block size, and longer than it (hashed first).
    const bodies = ['', 'x', body(), 'a'.repeat(4 * 1024 - 64), 'a'.repeat(4 * 1024 - 63), 'บาท'.repeat(700), 'é'.repeat(5000), '{}']
    for (const k of [key, randomBytes(64), randomBytes(65), randomBytes(200)]) {
      const prepared = announcementKeyOf(k)
      for (const b of bodies) expect(macOf(b, prepared).toString('hex')).toBe(createHmac('sha256', k).update(b, 'utf8').digest('hex'))
    }
  })

  it('with nothing running and no older event: newestRunning -1, lastOlderTx null', () => {
    const a = readAnnouncement(sign(body({ r: [], m: null })), key)
    expect(a?.newestRunning).toBe(-1n)
    expect(a?.lastOlderTx).toBeNull()
  })

  it('believes nothing not signed by this key: another key, a changed body, a changed signature, a bare body, an empty payload', () => {
    const good = sign(body())
    expect(readAnnouncement(good, key)).toBeDefined()
    expect(readAnnouncement(sign(body(), randomBytes(32)), key)).toBeUndefined()
    expect(readAnnouncement(good.replace('"t":"100"', '"t":"101"'), key)).toBeUndefined()
    const flipped = (good[0] === 'a' ? 'b' : 'a') + good.slice(1)
    expect(readAnnouncement(flipped, key)).toBeUndefined()
    expect(readAnnouncement(body(), key)).toBeUndefined()
    expect(readAnnouncement('', key)).toBeUndefined()
    expect(readAnnouncement('zz'.repeat(32) + body(), key)).toBeUndefined()
  })

  it('a signed bare wake-up (only the transaction: the events did not fit) is not an announcement', () => {
    expect(readAnnouncement(sign(JSON.stringify({ t: '100' })), key)).toBeUndefined()
  })

  it('refuses signed bodies of the wrong shape rather than delivering from them', () => {
    const bad: ReadonlyArray<Record<string, unknown>> = [
      { t: 100 },
      { t: '-1' },
      { x: 'a' },
      { r: ['1', 2] },
      { r: 'none' },
      { m: ['90'] },
      { m: [90, 12] },
      { e: [] },
      { e: [row('13').slice(1)] },
      { e: [[...row('13').slice(0, 8), 'yesterday']] },
      { e: [['13', null, ...row('13').slice(2)]] },
      { t: '1'.repeat(21) },
    ]
    for (const over of bad) expect(readAnnouncement(sign(body(over)), key), JSON.stringify(over)).toBeUndefined()
    expect(readAnnouncement(sign('[1,2]'), key)).toBeUndefined()
    expect(readAnnouncement(sign('null'), key)).toBeUndefined()
    expect(readAnnouncement(sign('{"t":'), key)).toBeUndefined()
  })
})

describe('verdictOf', () => {
  // `running` follows `newestRunning` unless given: the list r, whose largest is newestRunning.
  const a = (over: Partial<Announcement> = {}): Announcement => ({
    tx: 100n,
    xmax: 101n,
    newestRunning: -1n,
    lastOlderTx: 90n,
    rows: [['100', '13'], ['100', '15']],
    ...over,
    running: over.running ?? (over.newestRunning === undefined || over.newestRunning < 0n ? [] : [over.newestRunning]),
  })
  const s = (over: Partial<FollowState> = {}): FollowState => ({ resolvedBelow: 95n, cursorTx: 90n, cursorPosition: 12n, ...over })

  it('delivers when nothing older can still come: nothing running below it, the snapshot past it, the last older event delivered', () => {
    expect(verdictOf(a(), s())).toBe('deliver')
    expect(verdictOf(a({ lastOlderTx: null }), s())).toBe('deliver')
    expect(verdictOf(a({ newestRunning: 94n }), s())).toBe('deliver')
  })

  it('waits for a transaction running at the snapshot that is not known to have ended', () => {
    expect(verdictOf(a({ newestRunning: 95n }), s())).toBe('wait')
    expect(verdictOf(a({ newestRunning: 99n }), s())).toBe('wait')
  })

  it('waits while ids between the snapshot xmax and the transaction may still run, unless they are all below resolvedBelow', () => {
    expect(verdictOf(a({ xmax: 99n }), s())).toBe('wait')
    expect(verdictOf(a({ xmax: 100n }), s())).toBe('deliver')
    expect(verdictOf(a({ xmax: 99n }), s({ resolvedBelow: 100n }))).toBe('deliver')
  })

  it('waits when an older event visible at the snapshot is not delivered yet', () => {
    expect(verdictOf(a({ lastOlderTx: 95n }), s())).toBe('wait')
    expect(verdictOf(a({ lastOlderTx: 94n }), s())).toBe('deliver')
  })

  it('ids known never to hold an event (ended with none) are not waited for; any other id still is', () => {
    const known = (...ids: bigint[]): KnownEmpty => ({ has: (id) => ids.includes(id) })
    // r names 96 and 98: both known empty, it goes; one of them unknown, it waits.
    expect(verdictOf(a({ newestRunning: 98n, running: [96n, 98n] }), s(), known(96n, 98n))).toBe('deliver')
    expect(verdictOf(a({ newestRunning: 98n, running: [96n, 98n] }), s(), known(98n))).toBe('wait')
    // [x, X) = [97, 100): every id of it must be known empty, or below resolvedBelow.
    expect(verdictOf(a({ xmax: 97n }), s(), known(97n, 98n, 99n))).toBe('deliver')
    expect(verdictOf(a({ xmax: 97n }), s(), known(97n, 99n))).toBe('wait')
    expect(verdictOf(a({ xmax: 97n }), s({ resolvedBelow: 98n }), known(98n, 99n))).toBe('deliver')
    // An older event visible at the snapshot is a real event: knowing ids empty never settles it.
    expect(verdictOf(a({ lastOlderTx: 96n }), s(), known(96n))).toBe('wait')
    // Its own transaction's cursor neither.
    expect(verdictOf(a(), s({ cursorTx: 100n, cursorPosition: 13n }), known(100n))).toBe('wait')
  })

  it('blockersOf names the ids an announcement waits for, at or above resolvedBelow and not known empty; none to ask about when something else holds it', () => {
    expect(blockersOf(a({ newestRunning: 98n, running: [93n, 96n, 98n], xmax: 97n }), s(), { has: (id) => id === 96n })).toEqual([98n, 97n, 99n])
    expect(blockersOf(a(), s())).toEqual([])
    expect(blockersOf(a({ lastOlderTx: 96n }), s())).toBeUndefined()
    expect(blockersOf(a({ tx: 200n, xmax: 100n, lastOlderTx: 90n }), s())).toBeUndefined()
    expect(blockersOf(a({ tx: 159n, xmax: 95n, lastOlderTx: 90n }), s())).toHaveLength(64)
  })

  it('drops what was delivered already: below resolvedBelow, or at or before the cursor', () => {
    expect(verdictOf(a({ tx: 94n }), s())).toBe('stale')
    expect(verdictOf(a(), s({ resolvedBelow: 101n, cursorTx: 100n, cursorPosition: 15n }))).toBe('stale')
    expect(verdictOf(a({ tx: 96n }), s({ cursorTx: 97n }))).toBe('stale')
    expect(verdictOf(a(), s({ cursorTx: 100n, cursorPosition: 15n }))).toBe('stale')
  })

  it('waits when a read delivered part of the transaction (a page ended inside it)', () => {
    expect(verdictOf(a(), s({ cursorTx: 100n, cursorPosition: 13n }))).toBe('wait')
  })

  it('the transaction right at resolvedBelow is deliverable', () => {
    expect(verdictOf(a({ tx: 95n, xmax: 90n, lastOlderTx: 94n }), s())).toBe('deliver')
  })
})
