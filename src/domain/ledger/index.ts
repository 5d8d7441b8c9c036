/** The double-entry ledger: accounts, posting rules, and the trial balance as reports show it. */
export * from './accounts.ts'
export * from './postings.ts'
export * from './report.ts'
export * from './rules.ts'
export * from './period.ts'
export * from './events/ledger-period-closed.ts'
