/**
 * A natural key from its parts, unambiguous whatever the parts contain (each part is
 * percent-encoded, then joined by `:`). The application turns a key into an event id (UUIDv5), so a
 * redelivered message maps to the event already stored.
 */
export const keyOf = (...parts: ReadonlyArray<string>): string => parts.map(encodeURIComponent).join(':')
