/** The double-entry ledger: accounts, posting rules, and the trial balance as reports show it. */
export * from './accounts.ts'
export * from './postings.ts'
export * from './report.ts'
