/** Server-rendered HTML of the sandbox's pages: escaping, one layout, the auto-submitting redirect form. */

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes text for element content and quoted attribute values. */
export const esc = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c)

/** HTML already escaped: a tagged template makes every interpolation escaped unless it is `Html`. */
export type Html = { readonly html: string }

export const raw = (html: string): Html => ({ html })

const piece = (v: unknown): string => {
  if (v === undefined || v === null || v === false) return ''
  if (Array.isArray(v)) return v.map(piece).join('')
  if (typeof v === 'object' && 'html' in v && typeof v.html === 'string') return v.html
  return esc(String(v))
}

/** `html\`<p>${text}</p>\``: interpolated values are escaped; `Html` values and lists of them are kept. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): Html =>
  raw(strings.reduce((out, s, i) => out + s + (i < values.length ? piece(values[i]) : ''), ''))

const STYLE = `
  body { font-family: system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
  header { background: #0b3d2e; color: #fff; padding: .75rem 1.5rem; font-size: .95rem; }
  main { max-width: 36rem; margin: 1.5rem auto; background: #fff; padding: 1.5rem; border-radius: .5rem; box-shadow: 0 1px 3px #0002; }
  h1 { font-size: 1.4rem; margin-top: 0; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; }
  dt { font-weight: 600; }
  dd { margin: 0; }
  fieldset { border: 1px solid #ccd; border-radius: .4rem; margin: 1rem 0; }
  label { display: block; padding: .25rem 0; }
  .actions { display: flex; gap: .75rem; margin-top: 1rem; }
  button { font-size: 1rem; padding: .6rem 1.2rem; border-radius: .4rem; border: 1px solid #0b3d2e; cursor: pointer; }
  button.primary { background: #0b6e4f; color: #fff; }
  button.secondary { background: #fff; color: #0b3d2e; }
  .note { color: #555; font-size: .9rem; }
  .status { font-weight: 600; }
  img.qr { display: block; margin: 1rem auto; width: 14rem; height: 14rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #e3e5ea; }
`

/** A whole page: language, title, a banner saying this is the sandbox, and `main`. */
export const page = (title: string, body: Html): string =>
  html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · satang gateway sandbox</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<header role="banner">satang gateway sandbox: test payments only, no money moves</header>
<main>
${body}
</main>
</body>
</html>
`.html

/**
 * The page that sends the payer's browser to the merchant: a POST form of `fields` (signed) to `url`,
 * submitted by script at once, with a button for browsers without script.
 */
export const redirectFormPage = (title: string, url: string, fields: Readonly<Record<string, unknown>>): string =>
  page(
    title,
    html`<h1>${title}</h1>
<form id="redirect" method="post" action="${url}">
${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${typeof value === 'string' ? value : JSON.stringify(value)}">\n`)}
<p>Returning you to the merchant…</p>
<noscript><button type="submit" class="primary">Continue to the merchant</button></noscript>
</form>
<script>document.getElementById('redirect').submit()</script>`,
  )

/** A page with a heading and a paragraph (results, errors). */
export const messagePage = (title: string, message: string): string => page(title, html`<h1>${title}</h1><p>${message}</p>`)

/** A description list of label/value rows; rows whose value is undefined are left out. */
export const details = (rows: ReadonlyArray<readonly [string, string | Html | undefined]>): Html =>
  html`<dl>${rows.filter(([, v]) => v !== undefined).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`
