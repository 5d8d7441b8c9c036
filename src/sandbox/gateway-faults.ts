import * as t from 'io-ts'
import { closedRecord } from './closed-record.ts'

/**
 * Faults of the `/gateway` endpoint, set through the control API. `phase` says whether the request is
 * processed first (`after`: the order exists but the caller gets no usable answer — the "unknown
 * outcome" a client must resolve by query) or not at all (`before`).
 */
const Phase = t.keyof({ before: null, after: null })
const Count = t.refinement(t.number, (n) => Number.isInteger(n) && n >= 0, 'a whole number of at least 0')

export const GatewayFaultsInput = closedRecord(
  'gateway faults',
  {},
  {
    /** Added to every answer (ms). */
    latencyMs: t.refinement(t.number, (n) => Number.isFinite(n) && n >= 0 && n <= 600_000, 'a number of ms from 0 to 600000'),
    /** The next `count` requests are answered with HTTP `status` (500, 502, 503 or 504). */
    http5xx: closedRecord('http5xx', { count: Count }, { status: t.union([t.literal(500), t.literal(502), t.literal(503), t.literal(504)]), phase: Phase }),
    /** The next `count` requests are never answered (the caller times out). */
    hang: closedRecord('hang', { count: Count }, { phase: Phase }),
    /** Only requests of these services are affected (default: every service). */
    services: t.array(t.string),
  },
)
export type GatewayFaultsInput = t.TypeOf<typeof GatewayFaultsInput>

export type GatewayFaultState = {
  readonly latencyMs: number
  readonly http5xx: { readonly count: number; readonly status: number; readonly phase: 'before' | 'after' }
  readonly hang: { readonly count: number; readonly phase: 'before' | 'after' }
  readonly services: ReadonlyArray<string>
}

/** What to do with one request. */
export type FaultDecision = {
  readonly latencyMs: number
  readonly fail?: { readonly status: number; readonly phase: 'before' | 'after' }
  readonly hang?: { readonly phase: 'before' | 'after' }
}

export type GatewayFaults = {
  readonly state: () => GatewayFaultState
  /** Replaces the fields given; the others keep their value. */
  readonly set: (input: GatewayFaultsInput) => GatewayFaultState
  readonly clear: () => void
  /** Decides the fault of the next request of `service`, consuming one count. */
  readonly next: (service: string | undefined) => FaultDecision
}

const NONE: GatewayFaultState = { latencyMs: 0, http5xx: { count: 0, status: 503, phase: 'before' }, hang: { count: 0, phase: 'before' }, services: [] }

export const makeGatewayFaults = (): GatewayFaults => {
  let state = NONE
  return {
    state: () => state,
    set: (input) => {
      state = {
        latencyMs: input.latencyMs ?? state.latencyMs,
        http5xx: input.http5xx === undefined ? state.http5xx : { count: input.http5xx.count, status: input.http5xx.status ?? 503, phase: input.http5xx.phase ?? 'before' },
        hang: input.hang === undefined ? state.hang : { count: input.hang.count, phase: input.hang.phase ?? 'before' },
        services: input.services ?? state.services,
      }
      return state
    },
    clear: () => {
      state = NONE
    },
    next: (service) => {
      const applies = state.services.length === 0 || (service !== undefined && state.services.includes(service))
      if (!applies) return { latencyMs: 0 }
      if (state.hang.count > 0) {
        state = { ...state, hang: { ...state.hang, count: state.hang.count - 1 } }
        return { latencyMs: state.latencyMs, hang: { phase: state.hang.phase } }
      }
      if (state.http5xx.count > 0) {
        state = { ...state, http5xx: { ...state.http5xx, count: state.http5xx.count - 1 } }
        return { latencyMs: state.latencyMs, fail: { status: state.http5xx.status, phase: state.http5xx.phase } }
      }
      return { latencyMs: state.latencyMs }
    },
  }
}
