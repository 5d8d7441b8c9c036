/**
 * A part of a key, percent-encoded. A lone surrogate (ill-formed UTF-16, which `encodeURIComponent`
 * refuses) is written `%uXXXX`, a form percent-encoding never produces, so no two parts share a code.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

const encodePart = (part: string): string => {
  if (!LONE_SURROGATE.test(part)) return encodeURIComponent(part)
  let out = ''
  for (const piece of part.match(/[\ud800-\udbff][\udc00-\udfff]|[\s\S]/g) ?? []) {
    const unit = piece.charCodeAt(0)
    out += piece.length === 1 && unit >= 0xd800 && unit <= 0xdfff ? `%u${unit.toString(16).toUpperCase()}` : encodeURIComponent(piece)
  }
  return out
}

/**
 * A natural key from its parts, unambiguous whatever the parts contain (each part is
 * percent-encoded, then joined by `:`). The application turns a key into an event id (UUIDv5), so a
 * redelivered message maps to the event already stored.
 */
export const keyOf = (...parts: ReadonlyArray<string>): string => parts.map(encodePart).join(':')
