/**
 * HTML built by tagged templates that escape by default: every interpolated value is text, unless it
 * is itself `Html` (made by `html` or, for trusted constant markup only, `raw`). A description holding
 * `<script>` is printed as the characters `<script>`, never as markup.
 */

const HTML_BRAND: unique symbol = Symbol('Html')

/** Markup that is safe to print: built by `html` from escaped parts. */
export type Html = { readonly [HTML_BRAND]: true; readonly text: string }

const markup = (text: string): Html => ({ [HTML_BRAND]: true, text })

const isHtml = (v: unknown): v is Html => typeof v === 'object' && v !== null && HTML_BRAND in v

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' }

/** Text as HTML: safe in element content and in quoted attribute values. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c)

/** What a template may interpolate: text (escaped), numbers, bigints, Html, nothing (null, undefined, false) or lists of these. */
export type Interpolated = string | number | bigint | boolean | null | undefined | Html | ReadonlyArray<Interpolated>

const render = (v: Interpolated): string => {
  if (v === null || v === undefined || v === false) return ''
  if (isHtml(v)) return v.text
  if (Array.isArray(v)) return v.map((x: Interpolated) => render(x)).join('')
  if (typeof v === 'string') return escapeHtml(v)
  return escapeHtml(String(v))
}

/** `html\`<p>${text}</p>\``: every value is escaped unless it is `Html`. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolated>): Html => {
  let out = strings[0] ?? ''
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '')
  })
  return markup(out)
}

/** Constant markup written in the code (a stylesheet, a library's script): never for data. */
export const raw = (trusted: string): Html => markup(trusted)

/** Html joined with a separator. */
export const joinHtml = (parts: ReadonlyArray<Html>, separator: Html = raw('')): Html => markup(parts.map((p) => p.text).join(separator.text))

/**
 * JSON for a `<script type="application/json">` data block: `<`, `>`, `&` and the line separators are
 * written as \u escapes, so no string in the data can close the element or start a comment.
 */
export const jsonScriptData = (value: unknown): Html =>
  markup(
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029'),
  )

/** The document as text. */
export const documentText = (h: Html): string => `<!doctype html>\n${h.text}`
