import { describe, expect, it } from 'vitest'
import { reportText, textTable, verdictText } from '../../../src/domain/reconciliation/report/text.ts'
import { aBreak, aHealed, quietReport, twoDayReport } from './report-fixtures.ts'

/* The terminal form of the reconciliation report, compared whole: every figure, column and line is part of what an operator reads. */

const lines = (...ls: ReadonlyArray<string>): string => `${ls.join('\n')}\n`

describe('the reconciliation report as text', () => {
  it('two days, one with no run: days and a TOTAL row, breaks by class, ageing, open breaks, healed items, a ledger difference, its sources', () => {
    expect(reportText(twoDayReport())).toBe(
      lines(
      'Reconciliation report, merchant M1, business days 2026-11-20 to 2026-11-21 (Asia/Bangkok): NOT RECONCILED (no run covered some day)',
      'as of 2026-11-22 07:00:00 Bangkok (2026-11-22 00:00:00 UTC) (log position 41); amounts in baht (THB); each figure is items / amount; payments and refunds counted apart',
      '',
      'DAY         VERDICT         PAYMENTS MATCHED  REFUNDS MATCHED     HEALED   PENDING  UNCHECKED      BREAKS  AT STAKE',
      '----------  --------------  ----------------  ---------------  ---------  --------  ---------  ----------  --------',
      '2026-11-20  breaks              2 / 1,235.56         0 / 0.00  1 / 50.50  1 / 7.00   1 / 9.00  2 / 124.00     24.00',
      '2026-11-21  not_reconciled          0 / 0.00         0 / 0.00   0 / 0.00  0 / 0.00   0 / 0.00    0 / 0.00      0.00',
      'TOTAL       not_reconciled      2 / 1,235.56         0 / 0.00  1 / 50.50  1 / 7.00   1 / 9.00  2 / 124.00     24.00',
      '',
      'Breaks by class (items seen by the runs of these days)',
      'CLASS               ITEMS  AMOUNT  AT STAKE',
      '------------------  -----  ------  --------',
      'amount_mismatch         1  120.00     20.00',
      'missing_at_gateway      1    4.00      4.00',
      'query_failed            1    9.00      9.00',
      '',
      'Ageing of the breaks still open (business day on or before 2026-11-21)',
      'CLASS               AGE (DAYS)  BREAKS  AT STAKE',
      '------------------  ----------  ------  --------',
      'amount_mismatch     2-7              1     20.00',
      'missing_at_gateway  >30              1      4.00',
      '',
      'Open breaks',
      'BREAK  CLASS               STATUS    ITEM           DAY         AT STAKE   AGE  DETAIL',
      '-----  ------------------  --------  -------------  ----------  --------  ----  ------------------------',
      'brk-1  amount_mismatch     open      payment ORD-7  2026-11-20     20.00   2 d  amounts differ',
      'brk-2  missing_at_gateway  reopened  refund RF-1    2026-11-20      4.00  40 d  no refund at the gateway',
      '',
      'Healed items',
      'ITEM           DAY         FROM  TO  AMOUNT  HEALED AT (BANGKOK)  RUN',
      '-------------  ----------  ----  --  ------  -------------------  -----',
      'payment ORD-3  2026-11-20  PI    PS   50.50  2026-11-20 11:00:00  run-1',
      'payment ORD-9  2026-11-20  —     PF    1.00  2026-11-20 11:00:00  run-2',
      '',
      'Ledger check at the end of 2026-11-21 (Asia/Bangkok):',
      '  gateway receivable (trial balance)                  1,500.00',
      '  expected from the items: paid orders                2,000.00',
      '                         + subscription charges         100.00',
      '                         − refunds                      700.00',
      '                         = expected                   1,400.00',
      '  DIFFERENCE 100.00: the ledger does not agree with the items',
      '',
      'Built from runs run-1, run-2; log position 41',
      ),
    )
  })

  it('one reconciled day with nothing open: no TOTAL row, "(none)" and "(no open breaks)", no open-break or healed section, the ledger agreeing, an empty log', () => {
    expect(reportText(quietReport())).toBe(
      lines(
      'Reconciliation report, merchant M2, business day 2026-11-20 (Asia/Bangkok): RECONCILED',
      'as of 2026-11-21 08:00:00 Bangkok (2026-11-21 01:00:00 UTC); amounts in baht (THB); each figure is items / amount; payments and refunds counted apart',
      '',
      'DAY         VERDICT     PAYMENTS MATCHED  REFUNDS MATCHED    HEALED   PENDING  UNCHECKED    BREAKS  AT STAKE',
      '----------  ----------  ----------------  ---------------  --------  --------  ---------  --------  --------',
      '2026-11-20  reconciled      1 / 2,500.00         0 / 0.00  0 / 0.00  0 / 0.00   0 / 0.00  0 / 0.00      0.00',
      '',
      'Breaks by class (items seen by the runs of these days)',
      '(none)',
      '',
      'Ageing of the breaks still open (business day on or before 2026-11-20)',
      '(no open breaks)',
      '',
      'Ledger check at the end of 2026-11-20 (Asia/Bangkok):',
      '  gateway receivable (trial balance)                  2,500.00',
      '  expected from the items: paid orders                2,500.00',
      '                         + subscription charges           0.00',
      '                         − refunds                        0.00',
      '                         = expected                   2,500.00',
      '  the ledger agrees with the items',
      '',
      'Built from runs (none); log position (empty log)',
      ),
    )
  })

  it('lists at most 50 open breaks and 50 healed items, and says how many more there are', () => {
    const r = twoDayReport()
    const many = {
      ...r,
      openBreaks: Array.from({ length: 1052 }, (_, i) => aBreak({ breakId: `b${String(i).padStart(4, '0')}` })),
      healed: Array.from({ length: 1051 }, (_, i) => aHealed({ itemId: `H${String(i).padStart(4, '0')}` })),
    }
    const text = reportText(many)
    const out = text.split('\n')
    expect(out.filter((l) => /^b\d{4} /.test(l))).toHaveLength(50)
    expect(out.filter((l) => /^payment H\d{4} /.test(l))).toHaveLength(50)
    expect(out).toContain('b0049  amount_mismatch  open    payment ORD-7  2026-11-20     20.00  2 d  amounts differ')
    expect(text).not.toContain('b0050')
    expect(text).not.toContain('H0050')
    expect(out).toContain('… and 1,002 more (--json and --csv list every one)')
    expect(out).toContain('… and 1,001 more')
    // the ageing counts every open break, listed or not
    expect(out).toContain('amount_mismatch  2-7          1,052  21,040.00')
  })

  it('exactly 50 open breaks and 50 healed items: every one listed, no "more" line', () => {
    const r = twoDayReport()
    const text = reportText({
      ...r,
      openBreaks: Array.from({ length: 50 }, (_, i) => aBreak({ breakId: `b${String(i).padStart(4, '0')}` })),
      healed: Array.from({ length: 50 }, (_, i) => aHealed({ itemId: `H${String(i).padStart(4, '0')}` })),
    })
    expect(text).toContain('b0049')
    expect(text).toContain('H0049')
    expect(text).not.toContain('more')
  })

  it('textTable pads text columns at the end and numeric ones at the start, with a rule under the header and no trailing spaces', () => {
    expect(textTable(['NAME', 'N', 'NOTE'], [['a', '10', ''], ['bbbbbb', '7', 'x'], ['c']], new Set([1]))).toEqual([
      'NAME     N  NOTE',
      '------  --  ----',
      'a       10',
      'bbbbbb   7  x',
      'c',
    ])
  })

  it('verdictText names each verdict and passes an unknown one through', () => {
    expect(['reconciled', 'reconciled_with_pending', 'breaks', 'incomplete', 'not_reconciled', 'other'].map(verdictText)).toEqual([
      'RECONCILED',
      'RECONCILED WITH PENDING ITEMS',
      'BREAKS OPEN',
      'INCOMPLETE (some items could not be checked)',
      'NOT RECONCILED (no run covered some day)',
      'other',
    ])
  })
})
