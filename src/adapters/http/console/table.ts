import { html, type Html, type Interpolated } from './html.ts'

/*
 * Tables that fit a phone: at 640 px and below each row becomes a card of label–value lines (CSS
 * `table.stack`, the label from each cell's `data-label`), so money never sits off-screen; above, an
 * ordinary table. Money cells carry the class `money` (the width test looks for them).
 */

export type Column = { readonly label: string; readonly num?: boolean; readonly money?: boolean }

export type Cell = Interpolated | { readonly html: Interpolated; readonly header?: boolean }

const cellOf = (c: Column, v: Cell): Html => {
  const content = typeof v === 'object' && v !== null && !Array.isArray(v) && 'html' in v ? v : { html: v as Interpolated, header: false }
  const cls = [c.num === true || c.money === true ? 'num' : '', c.money === true ? 'money' : ''].filter((x) => x !== '').join(' ')
  const tag = content.header === true ? 'th' : 'td'
  return html`${tag === 'th' ? html`<th scope="row"` : html`<td`}${cls === '' ? '' : html` class="${cls}"`} data-label="${c.label}">${content.html}${tag === 'th' ? html`</th>` : html`</td>`}`
}

/** A table whose rows reflow into stacked cards on narrow screens. */
export const stackTable = (o: { readonly id?: string; readonly caption?: string; readonly columns: ReadonlyArray<Column>; readonly rows: ReadonlyArray<ReadonlyArray<Cell>>; readonly empty?: string; readonly foot?: ReadonlyArray<ReadonlyArray<Cell>> }): Html =>
  html`<table class="stack"${o.id === undefined ? '' : html` id="${o.id}"`}>${o.caption === undefined ? '' : html`<caption>${o.caption}</caption>`}<thead><tr>${o.columns.map((c) => html`<th scope="col"${c.num === true || c.money === true ? html` class="num"` : ''}>${c.label}</th>`)}</tr></thead><tbody>${
    o.rows.length === 0 ? html`<tr><td colspan="${o.columns.length}">${o.empty ?? 'None.'}</td></tr>` : o.rows.map((r) => html`<tr>${r.map((v, i) => cellOf(o.columns[i] ?? { label: '' }, v))}</tr>`)
  }${(o.foot ?? []).map((r) => html`<tr class="total">${r.map((v, i) => cellOf(o.columns[i] ?? { label: '' }, v))}</tr>`)}</tbody></table>`
