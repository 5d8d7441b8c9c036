import * as E from 'fp-ts/lib/Either.js'
import { expect } from 'vitest'

type Decider<C, S, Ev, R> = {
  readonly initialState: S
  readonly evolve: (s: S, e: Ev) => S
  readonly decide: (c: C, s: S) => E.Either<R, ReadonlyArray<Ev>>
}

/** given(events).when(command).then(events) / .thenNothing() / .thenRejects(tag) / .thenRejectsWith(rejection) — the domain's test idiom. */
export const deciderSpec =
  <C, S, Ev extends { readonly type: string }, R extends { readonly _tag: string }>(d: Decider<C, S, Ev, R>) =>
  (...given: ReadonlyArray<Ev>) => ({
    when: (command: C) => {
      const before = given.reduce(d.evolve, d.initialState)
      const result = d.decide(command, before)
      const events = (): ReadonlyArray<Ev> => {
        if (E.isLeft(result)) throw new Error(`expected events, got the rejection ${JSON.stringify(result.left, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`)
        return result.right
      }
      return {
        result,
        events,
        /** The state after the decided events. */
        state: (): S => events().reduce(d.evolve, before),
        then: (expected: ReadonlyArray<Ev>) => expect(events()).toEqual(expected),
        thenNothing: () => expect(result).toEqual(E.right([])),
        thenTypes: (...types: ReadonlyArray<string>) => expect(events().map((e) => e.type)).toEqual(types),
        thenRejects: (tag: R['_tag']) => expect(E.isLeft(result) ? result.left._tag : 'no rejection').toBe(tag),
        /** The whole rejection, not only its tag. */
        thenRejectsWith: (rejection: R) => expect(result).toEqual(E.left(rejection)),
      }
    },
  })
