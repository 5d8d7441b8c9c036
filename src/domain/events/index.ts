/**
 * Domain events: `defineEvent`, the metadata every event carries, PDPA redaction, the shared callback
 * and discrepancy events, and the registry of every event type (`decodeDomainEvent`, `encodeDomainEvent`,
 * `toEventToAppend`, `naturalKeyOf`).
 */
export * from './codecs.ts'
export * from './common/callback-quarantined.ts'
export * from './common/callback-rejected.ts'
export * from './common/discrepancy-observed.ts'
export * from './common/notification-received.ts'
export * from './common/redirect-received.ts'
export * from './define-event.ts'
export * from './metadata.ts'
export * from './natural-key.ts'
export * from './redaction.ts'
export * from './request-outcome.ts'

export * from './registry.ts'
