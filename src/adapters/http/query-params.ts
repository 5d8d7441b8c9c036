import type { FastifyRequest } from 'fastify'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { parseCalendarDate } from '../../domain/bangkok-time.ts'
import type { Violation } from '../../domain/violations.ts'

/** Query parameters of a `/v1` read, checked all at once: a 400 names every bad parameter and the rule it breaks. */
export type Query = Readonly<Record<string, unknown>>

export const queryOf = (request: FastifyRequest): Query => (t.UnknownRecord.is(request.query) ? request.query : {})

/** Collects the violations of one request's query while its parameters are read. */
export const reader = (query: Query, known: ReadonlyArray<string>) => {
  const violations: Violation[] = []
  for (const name of Object.keys(query)) {
    if (!known.includes(name)) violations.push({ path: name, rule: `is not a parameter of this route (known: ${known.join(', ')})` })
  }
  /** The parameter's text when given once and valid by `check` (which returns the rules broken), else null. */
  const text = (name: string, check: (s: string) => ReadonlyArray<string>): string | null => {
    const raw = query[name]
    if (raw === undefined) return null
    if (typeof raw !== 'string') {
      violations.push({ path: name, rule: 'must be given once' })
      return null
    }
    const rules = raw === '' ? ['must not be empty'] : check(raw)
    for (const rule of rules) violations.push({ path: name, rule })
    return rules.length === 0 ? raw : null
  }
  return { violations, text, fail: (path: string, rule: string) => violations.push({ path, rule }) }
}

export const dateRules = (s: string): ReadonlyArray<string> => {
  const parsed = parseCalendarDate(s)
  if (E.isLeft(parsed)) return parsed.left.map((r) => (r === 'must be yyyy-MM-dd' ? 'must be a date yyyy-MM-dd (Asia/Bangkok)' : r))
  return parsed.right.year < 1 ? ['year must be 0001 or later'] : []
}
