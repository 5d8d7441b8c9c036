import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { EventStore, Position } from '../../src/application/ports/event-store.ts'
import type { RelayRuntime } from '../../src/jobs/index.ts'
import { RELAY_READY_STALL_MS, relayReadiness } from '../../src/roles/relay.ts'

/**
 * The relay role's /readyz check, from the relay loop's state (issue 25, item 4): the rules that the
 * real-process test (test/e2e/readiness.e2e.test.ts) does not reach in its time, such as a publisher
 * whose checkpoint has not moved for a minute while events wait. The runtime and the log's head are
 * plain values here: the check is pure logic over them.
 */

const pos = (n: number): Position => String(n).padStart(20, '0') as Position
const headAt = (p: Position | undefined): Pick<EventStore, 'headPosition'> => ({ headPosition: () => async () => E.right(p) })
const NOW = 10_000_000

const runtime = (over: Partial<RelayRuntime>): RelayRuntime => ({
  role: 'leader',
  topic: 'satang.events',
  destination: 'topic satang.events',
  position: pos(10),
  published: 10,
  publishRate: 0,
  lastError: null,
  failing: false,
  connected: true,
  progressAt: NOW - 1_000,
  ...over,
})

const check = (r: RelayRuntime, head: Position | undefined): Promise<string | null> => relayReadiness({ runtime: () => r }, headAt(head) as EventStore, () => NOW).check()

describe('relayReadiness', () => {
  it('ready: a publisher caught up, or behind but moving; a standby', async () => {
    expect(await check(runtime({}), pos(10))).toBeNull()
    expect(await check(runtime({ progressAt: NOW - 5_000 }), pos(50))).toBeNull()
    expect(await check(runtime({ role: 'standby', connected: false }), pos(50))).toBeNull()
    // Caught up and idle for long: nothing to publish, nothing wrong.
    expect(await check(runtime({ progressAt: NOW - 10 * RELAY_READY_STALL_MS }), pos(10))).toBeNull()
  })

  it('not ready: failing (naming the error), not connected yet, starting, stopped', async () => {
    expect(await check(runtime({ failing: true, connected: false, lastError: { at: new Date(0), kind: 'unreachable', message: 'no broker answered' } }), pos(10))).toBe('the relay cannot publish to satang.events: [unreachable] no broker answered')
    expect(await check(runtime({ connected: false }), pos(10))).toBe('the relay has not reached the broker yet (topic satang.events)')
    expect(await check(runtime({ role: 'starting' }), pos(10))).toMatch(/starting/)
    expect(await check(runtime({ role: 'stopped' }), pos(10))).toBe('the relay is stopped')
  })

  it('not ready: events wait and the checkpoint has not moved for more than a minute', async () => {
    expect(await check(runtime({ progressAt: NOW - RELAY_READY_STALL_MS - 1_000 }), pos(11))).toBe('events wait to be published to satang.events but the checkpoint has not moved for 61 s')
    expect(await check(runtime({ position: null, progressAt: NOW - RELAY_READY_STALL_MS - 1_000 }), pos(1))).toMatch(/checkpoint has not moved/)
  })
})
