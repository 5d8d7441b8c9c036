/** The refund aggregate: commands, events, state, decide/evolve, stream names and natural keys. */
export type * from './commands.ts'
export { decide } from './decide.ts'
export { evolve, fold } from './evolve.ts'
export * from './events/index.ts'
export type * from './rejections.ts'
export * from './state.ts'
export * from './stream.ts'
export * from './ledger.ts'
