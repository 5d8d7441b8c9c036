/**
 * About how many bytes of V8 heap a plain value holds: strings, numbers, bigints, booleans, Dates,
 * arrays, Maps, Sets and plain objects, walked to the leaves (a value reached twice is counted once).
 * An estimate from V8's layouts on 64-bit with pointer compression (4-byte fields, 12–16-byte headers,
 * one byte per Latin-1 character, two otherwise), meant for budgets, not accounting: it errs high.
 */
export const approximateBytes = (value: unknown): number => {
  const seen = new Set<object>()
  const walk = (v: unknown): number => {
    switch (typeof v) {
      case 'string':
        // A one-byte string when every character is Latin-1, else two bytes each; header 12, rounded to 4.
        return 16 + Math.ceil((/[^\u0000-\u00ff]/.test(v) ? v.length * 2 : v.length) / 4) * 4
      case 'number':
        return 12 // a heap number, at worst (small integers are held in the field itself)
      case 'bigint':
        return 16 + Math.ceil(v.toString(16).length / 16) * 8
      case 'boolean':
      case 'undefined':
      case 'symbol':
      case 'function':
        return 0
      case 'object': {
        if (v === null) return 0
        if (seen.has(v)) return 0
        seen.add(v)
        if (v instanceof Date) return 32
        if (Array.isArray(v)) return v.reduce<number>((n, x) => n + 4 + walk(x), 16)
        if (v instanceof Map) {
          let n = 64
          for (const [k, x] of v) n += 12 + walk(k) + walk(x)
          return n
        }
        if (v instanceof Set) {
          let n = 64
          for (const x of v) n += 8 + walk(x)
          return n
        }
        if (ArrayBuffer.isView(v)) return 64 + v.byteLength
        let n = 16
        for (const [k, x] of Object.entries(v)) n += 4 + walk(k) + walk(x) // a key is often shared (a hidden class), counted anyway: errs high
        return n
      }
      default:
        return 0
    }
  }
  return walk(value)
}
