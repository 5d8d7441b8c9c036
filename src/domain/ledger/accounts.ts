/**
 * The ledger's chart of accounts. Every amount is integer satang; a balance is always debits minus
 * credits (so an account whose normal side is credit, such as `sales`, shows a negative balance).
 */

export const LEDGER_ACCOUNTS = ['gateway_receivable', 'refunds', 'sales', 'subscription_sales'] as const
export type LedgerAccount = (typeof LEDGER_ACCOUNTS)[number]

export const isLedgerAccount = (s: string): s is LedgerAccount => (LEDGER_ACCOUNTS as ReadonlyArray<string>).includes(s)

export type NormalSide = 'debit' | 'credit'

export type AccountInfo = {
  readonly normalSide: NormalSide
  readonly meaning: string
}

export const ACCOUNTS: { readonly [A in LedgerAccount]: AccountInfo } = {
  gateway_receivable: {
    normalSide: 'debit',
    meaning: 'asset: money the gateway collected for the merchant and owes it (paid orders and subscription charges, less refunds sent back to payers)',
  },
  refunds: { normalSide: 'debit', meaning: 'contra-revenue: money returned to payers by successful refunds' },
  sales: { normalSide: 'credit', meaning: 'revenue: orders paid (one-off payments and checkouts)' },
  subscription_sales: { normalSide: 'credit', meaning: 'revenue: subscription deductions that succeeded (recurring billing)' },
}

export const normalSideOf = (account: string): NormalSide | null => (isLedgerAccount(account) ? ACCOUNTS[account].normalSide : null)

/** The channel of subscription charges: the subscription requests name no payment method. */
export const SUBSCRIPTION_CHANNEL = 'subscription'
/** The channel of a refund whose order satang never saw created. */
export const UNKNOWN_CHANNEL = 'unknown'
