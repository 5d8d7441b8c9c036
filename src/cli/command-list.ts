/**
 * The commands as `satang --help` lists them, so that it loads none of their modules (each command's
 * module is loaded when it runs: src/cli.ts). Kept equal to the commands' own definitions by
 * test/cli/lazy-help.unit.test.ts: a command added, renamed or described anew there fails that test
 * until it is listed here the same.
 */
export type ListedCommand = {
  readonly name: string
  /** As help shows it: the name, `[options]` when it has options, its arguments. */
  readonly term: string
  readonly description: string
  readonly commands?: ReadonlyArray<ListedCommand>
}

export const COMMAND_LIST: ReadonlyArray<ListedCommand> = [
  {
    name: 'up',
    term: 'up [options]',
    description: 'run satang: database (embedded PostgreSQL unless SATANG_DATABASE_URL is set), migrations, event store, projector (read models), the Kafka relay when SATANG_KAFKA_BROKERS is set, merchant API and callbacks, the reconciliation scheduler (daily run and sweeps, SATANG_RECONCILE_*), and the built-in sandbox as the gateway unless SATANG_GATEWAY_BASE_URL is set',
  },
  {
    name: 'migrate',
    term: 'migrate [options]',
    description: 'create or upgrade the database schemas: the event store (eventstore) and the read models (satang, knex migrations); safe to run repeatedly and from several processes at once',
  },
  {
    name: 'signature',
    term: 'signature',
    description: 'canonical string, signing and verification of gateway field sets (satang-canonical-v1 + RSA-SHA256)',
    commands: [
      {
        name: 'canonical',
        term: 'canonical [options]',
        description: 'print the canonical string that would be signed',
      },
      {
        name: 'sign',
        term: 'sign [options]',
        description: 'sign the fields with an RSA private key; prints the base64 signature',
      },
      {
        name: 'verify',
        term: 'verify [options]',
        description: 'verify a signature; exit 0 when valid, 1 when not (with a one-line reason)',
      },
    ],
  },
  {
    name: 'sandbox',
    term: 'sandbox [options]',
    description: 'run the gateway sandbox: the gateway spec\'s server side ({url}/gateway), payer pages, and a control API under /_sandbox',
  },
  {
    name: 'project',
    term: 'project [options]',
    description: 'run the projector that keeps the read models (orders, refunds, subscriptions, ledger, audit log) current; or show its lag; or rebuild read models from the event log',
  },
  {
    name: 'reconcile',
    term: 'reconcile [options]',
    description: 'reconcile a Bangkok business day (default yesterday) or a range with the gateway: heal what can be healed, report every break by class, track breaks until resolved or acknowledged',
    commands: [
      {
        name: 'ack',
        term: 'ack [options] <break_id>',
        description: 'acknowledge (close) an open break with a reason; the actor and the reason are recorded',
      },
    ],
  },
  {
    name: 'report',
    term: 'report',
    description: 'finance reports from the read models: report ledger (the trial balance), report reconciliation, report verify',
    commands: [
      {
        name: 'ledger',
        term: 'ledger [options]',
        description: 'print the trial balance of the double-entry ledger (accounts per channel and currency; debits = credits)',
      },
      {
        name: 'reconciliation',
        term: 'reconciliation [options]',
        description: 'the reconciliation of a Bangkok business day or range for finance: verdicts, counts and amounts, ageing, open breaks, healed items, the ledger check',
      },
      {
        name: 'verify',
        term: 'verify [options] <dir>',
        description: 'check a report folder against its manifest.json (SHA-256 of every file)',
      },
    ],
  },
  {
    name: 'ledger',
    term: 'ledger',
    description: 'the double-entry ledger: ledger close (close periods; the trial balance is satang report ledger)',
    commands: [
      {
        name: 'close',
        term: 'close [options]',
        description: 'close the ledger through an Asia/Bangkok business day (its entries never change again)',
      },
    ],
  },
  {
    name: 'audit',
    term: 'audit [options] <id>',
    description: 'print the audit trail of an order, refund or subscription: every event in order, with its source, times, signature result and payload',
    commands: [
      {
        name: 'verify',
        term: 'verify [options]',
        description: 'check the event log\'s tamper evidence: recompute every event\'s hash chain and report the first break',
      },
    ],
  },
  {
    name: 'relay',
    term: 'relay [options]',
    description: 'publish every event of the log to the Kafka topic (SATANG_KAFKA_TOPIC on SATANG_KAFKA_BROKERS), in order per stream, at least once; or show how the relay is doing',
  },
  {
    name: 'users',
    term: 'users',
    description: 'console accounts: users add, list, disable, reset-password (people who sign in to /console as themselves)',
    commands: [
      { name: 'add', term: 'add [options] <NAME>', description: 'add a console account with a role (finance, auditor or admin)' },
      { name: 'list', term: 'list [options]', description: 'list the console accounts: name, role, whether disabled or locked, when the password was set' },
      { name: 'disable', term: 'disable [options] <NAME>', description: 'disable a console account: it signs in no more, and its sessions end at once' },
      { name: 'reset-password', term: 'reset-password [options] <NAME>', description: 'set a new password for a console account (enables it again, clears its lockout, ends its sessions)' },
    ],
  },
]
