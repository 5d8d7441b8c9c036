import { isIP } from 'node:net'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { ApiTokens } from './adapters/http/api-tokens.ts'
import { canonicalizers } from './domain/gateway/canonical.ts'
import { StatusTableCodec, type StatusTable } from './domain/gateway/statuses.ts'
import { OTLP_PROTOCOLS, SAMPLERS } from './adapters/telemetry/settings.ts'

/**
 * satang's configuration: environment variables and/or a JSON config file (`SATANG_CONFIG`), whose
 * keys are the same variable names. The environment wins over the file. Decoded once, at start, by
 * `main.ts`; nothing else reads `process.env`. Errors name the variable and the rule, never the value.
 */

const intInRange = (name: string, min: number, max: number) =>
  new t.Type<number, string, unknown>(
    name,
    (u): u is number => typeof u === 'number' && Number.isInteger(u) && u >= min && u <= max,
    (u, c) => {
      const s = typeof u === 'number' ? String(u) : u
      if (typeof s !== 'string' || !/^\d+$/.test(s)) return t.failure(u, c, `must be a whole number from ${min} to ${max}`)
      const n = Number(s)
      return n >= min && n <= max ? t.success(n) : t.failure(u, c, `must be a whole number from ${min} to ${max}`)
    },
    String,
  )

const oneOf = <const K extends string>(name: string, values: ReadonlyArray<K>) =>
  new t.Type<K, string, unknown>(
    name,
    (u): u is K => typeof u === 'string' && (values as ReadonlyArray<string>).includes(u),
    (u, c) =>
      typeof u === 'string' && (values as ReadonlyArray<string>).includes(u)
        ? t.success(u as K)
        : t.failure(u, c, `must be one of ${values.join(', ')}`),
    String,
  )

const nonEmpty = new t.Type<string, string, unknown>(
  'NonEmptyString',
  (u): u is string => typeof u === 'string' && u.trim() !== '',
  (u, c) => (typeof u === 'string' && u.trim() !== '' ? t.success(u.trim()) : t.failure(u, c, 'must be a non-empty string')),
  String,
)

const url = (schemes: ReadonlyArray<string>) =>
  new t.Type<string, string, unknown>(
    'Url',
    (u): u is string => typeof u === 'string',
    (u, c) => {
      if (typeof u !== 'string') return t.failure(u, c, 'must be a URL')
      try {
        const parsed = new URL(u)
        const scheme = parsed.protocol.replace(/:$/, '')
        return schemes.includes(scheme) ? t.success(u) : t.failure(u, c, `must be a URL with scheme ${schemes.join(' or ')}`)
      } catch (e) {
        return t.failure(u, c, `must be a URL (${e instanceof TypeError ? 'unparseable' : 'invalid'})`)
      }
    },
    String,
  )

const merchantId = new t.Type<string, string, unknown>(
  'MerchantId',
  (u): u is string => typeof u === 'string' && /^14\d{16}$/.test(u),
  (u, c) => (typeof u === 'string' && /^14\d{16}$/.test(u) ? t.success(u) : t.failure(u, c, 'must be 18 digits starting with 14')),
  String,
)

const codeList = new t.Type<ReadonlyArray<number>, string, unknown>(
  'CodeList',
  (u): u is ReadonlyArray<number> => Array.isArray(u) && u.every((n) => Number.isInteger(n)),
  (u, c) => {
    const s = typeof u === 'number' ? String(u) : u
    if (typeof s !== 'string' || !/^\s*\d{1,9}(\s*,\s*\d{1,9})*\s*$/.test(s)) return t.failure(u, c, 'must be a comma-separated list of whole numbers')
    return t.success(s.split(',').map((x) => Number(x.trim())))
  },
  (codes) => codes.join(','),
)

/** A JSON object of extra status codes (`{"PF":{"meaning":"payment failed","outcome":"failed"}}`). */
const statusTableJson = new t.Type<StatusTable, string, unknown>(
  'StatusTableJson',
  StatusTableCodec.is,
  (u, c) => {
    let parsed: unknown = u
    if (typeof u === 'string') {
      try {
        parsed = JSON.parse(u)
      } catch {
        return t.failure(u, c, 'must be a JSON object of status codes, e.g. {"PF":{"meaning":"payment failed","outcome":"failed"}}')
      }
    }
    const decoded = StatusTableCodec.decode(parsed)
    if (E.isRight(decoded)) return t.success(decoded.right)
    const rules = decoded.left.map((e) => {
      const path = e.context.map((x) => x.key).filter((k) => k !== '').join('.')
      return `${path === '' ? '' : `${path}: `}${e.message ?? 'must be { meaning, outcome: pending|succeeded|failed }'}`
    })
    return t.failure(u, c, [...new Set(rules)].join('; '))
  },
  (table) => JSON.stringify(table),
)

/** `host:port[,host:port…]`: the Kafka bootstrap brokers. */
const brokerList = new t.Type<ReadonlyArray<string>, string, unknown>(
  'BrokerList',
  (u): u is ReadonlyArray<string> => Array.isArray(u) && u.every((b) => typeof b === 'string'),
  (u, c) => {
    const rule = 'must be a comma-separated list of host:port (e.g. 127.0.0.1:9092,kafka-2:9092)'
    if (typeof u !== 'string') return t.failure(u, c, rule)
    const brokers = u.split(',').map((b) => b.trim())
    const valid = brokers.every((b) => {
      const m = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/.exec(b)
      return m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 65535
    })
    return brokers.length > 0 && valid ? t.success(brokers) : t.failure(u, c, rule)
  },
  (brokers) => brokers.join(','),
)

/** A Kafka topic name: 1–249 of `[A-Za-z0-9._-]`, and not `.` or `..`. */
const topicName = new t.Type<string, string, unknown>(
  'TopicName',
  (u): u is string => typeof u === 'string',
  (u, c) =>
    typeof u === 'string' && /^[A-Za-z0-9._-]{1,249}$/.test(u) && u !== '.' && u !== '..'
      ? t.success(u)
      : t.failure(u, c, 'must be a Kafka topic name: 1 to 249 letters, digits, dots, underscores or hyphens'),
  String,
)

/** A CloudEvents `source`: a non-empty URI reference without spaces (e.g. `/satang`, `urn:satang:shop-1`). */
const uriReference = new t.Type<string, string, unknown>(
  'UriReference',
  (u): u is string => typeof u === 'string',
  (u, c) => (typeof u === 'string' && /^[^\s]{1,255}$/.test(u) ? t.success(u) : t.failure(u, c, 'must be a URI reference without spaces, such as /satang or urn:satang:shop-1')),
  String,
)

/** A comma-separated list of IP addresses or CIDR blocks (IPv4 or IPv6): the trusted reverse proxies. */
const proxyList = new t.Type<ReadonlyArray<string>, string, unknown>(
  'ProxyList',
  (u): u is ReadonlyArray<string> => Array.isArray(u) && u.every((p) => typeof p === 'string'),
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c, 'must be a comma-separated list of IP addresses or CIDRs (e.g. 10.0.0.0/8,127.0.0.1)')
    const items = u.split(',').map((p) => p.trim()).filter((p) => p !== '')
    const bad = items.filter((p) => {
      const [address = '', prefix, ...rest] = p.split('/')
      const family = isIP(address)
      if (family === 0 || rest.length > 0) return true
      if (prefix === undefined) return false
      return !/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128)
    })
    if (items.length === 0 || items.length > 64) return t.failure(u, c, 'must list 1 to 64 IP addresses or CIDRs, comma-separated')
    return bad.length === 0 ? t.success(items) : t.failure(u, c, `must be a comma-separated list of IP addresses or CIDRs; not one: ${bad.slice(0, 5).map((b) => JSON.stringify(b.slice(0, 64))).join(', ')}`)
  },
  (items) => items.join(','),
)

/** A Bangkok wall-clock time of day, `HH:mm`, as minutes after midnight. */
const timeOfDay = new t.Type<number, string, unknown>(
  'TimeOfDay',
  (u): u is number => typeof u === 'number' && Number.isInteger(u) && u >= 0 && u < 1440,
  (u, c) => {
    const m = typeof u === 'string' ? /^([01]\d|2[0-3]):([0-5]\d)$/.exec(u) : null
    return m === null ? t.failure(u, c, 'must be a time of day HH:mm (Asia/Bangkok), e.g. 00:30') : t.success(Number(m[1]) * 60 + Number(m[2]))
  },
  (n) => `${String(Math.floor(n / 60)).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}`,
)

/** `OTEL_RESOURCE_ATTRIBUTES`: key=value pairs, comma-separated, values percent-encoded (the OpenTelemetry format). */
const resourceAttributes = new t.Type<Readonly<Record<string, string>>, string, unknown>(
  'ResourceAttributes',
  (u): u is Readonly<Record<string, string>> => typeof u === 'object' && u !== null,
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c, 'must be key=value pairs separated by commas')
    const out: Record<string, string> = {}
    for (const pair of u.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
      const eq = pair.indexOf('=')
      const key = eq > 0 ? pair.slice(0, eq).trim() : ''
      if (key === '' || !/^[\x21-\x7e]+$/.test(key) || key.length > 255) return t.failure(u, c, 'must be key=value pairs separated by commas (keys of printable ASCII, at most 255 characters)')
      try {
        out[key] = decodeURIComponent(pair.slice(eq + 1).trim())
      } catch {
        return t.failure(u, c, 'must have percent-encoded values')
      }
    }
    return t.success(out)
  },
  (r) => Object.entries(r).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join(','),
)

/** A ratio from 0 to 1 (`OTEL_TRACES_SAMPLER_ARG`). */
const ratio = new t.Type<number, string, unknown>(
  'Ratio',
  (u): u is number => typeof u === 'number' && u >= 0 && u <= 1,
  (u, c) => {
    const n = typeof u === 'string' && /^\s*(0|1|0?\.\d+|1\.0*)\s*$/.test(u) ? Number(u) : typeof u === 'number' ? u : NaN
    return n >= 0 && n <= 1 ? t.success(n) : t.failure(u, c, 'must be a number from 0 to 1')
  },
  String,
)

/** Points after which `SATANG_FAULT_CRASH_AFTER` kills the process (test/fault injection only). */
export const CRASH_POINTS = ['PaymentRequested', 'GatewayAnswer', 'ProjectionBatch', 'ReconcileBatch'] as const

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** Every setting: variable name → codec and default (`undefined` = optional, no default). */
const settings = {
  SATANG_LOG_LEVEL: { codec: oneOf('LogLevel', LOG_LEVELS), default: 'info', doc: 'pino log level' },
  SATANG_DATA_DIR: { codec: nonEmpty, default: '.satang', doc: 'folder for embedded PostgreSQL data and generated keys' },
  SATANG_DATABASE_URL: { codec: url(['postgres', 'postgresql']), default: undefined, doc: 'PostgreSQL URL; unset = start embedded PostgreSQL in SATANG_DATA_DIR' },
  SATANG_DATABASE_PASSWORD_FILE: { codec: nonEmpty, default: undefined, doc: "file holding the password of SATANG_DATABASE_URL's user (one line; a Docker or Compose secret), used instead of a password in the URL" },
  SATANG_DATABASE_POOL_SIZE: { codec: intInRange('Connections', 2, 1_000), default: undefined, doc: 'most PostgreSQL connections one satang process opens; unset = 2 × CPU cores (statements the server can run at once) + 10 (one per projection, the relay and scheduler locks, reads)' },
  SATANG_DATABASE_OWNER_URL: { codec: url(['postgres', 'postgresql']), default: undefined, doc: "PostgreSQL URL of the owner role, which runs the migrations and grants SATANG_DATABASE_URL's user (the service role) only SELECT and INSERT on the event log; unset = migrations run as SATANG_DATABASE_URL's user" },
  SATANG_DATABASE_OWNER_PASSWORD_FILE: { codec: nonEmpty, default: undefined, doc: "file holding the password of SATANG_DATABASE_OWNER_URL's user (one line; a Docker or Compose secret), used instead of a password in the URL" },
  SATANG_ANCHOR_KEY_FILE: { codec: nonEmpty, default: undefined, doc: 'PEM file of the Ed25519 private key that signs anchors (needed by the scheduler role and satang reconcile, not by the API); unset = SATANG_DATA_DIR/anchor-private.pem, generated when absent' },
  SATANG_ANCHOR_INTERVAL_MINUTES: { codec: intInRange('Minutes', 0, 10_080), default: '60', doc: 'minutes between anchors written by the scheduler (an anchor is also written after every reconciliation run that records events; a sweep that changes nothing records none); 0 = only after such runs' },
  SATANG_ANCHOR_FILE: { codec: nonEmpty, default: undefined, doc: 'file outside the database to which every anchor is also appended (one JSON line each); unset = the database only' },
  SATANG_EMBEDDED_PG_PORT: { codec: intInRange('Port', 1, 65535), default: '54329', doc: 'port of the embedded PostgreSQL' },
  SATANG_EVENT_STORE: { codec: oneOf('EventStoreKind', ['postgres', 'eventstoredb'] as const), default: 'postgres', doc: 'which event store adapter' },
  SATANG_EVENTSTOREDB_URL: { codec: url(['esdb', 'esdb+discover', 'kurrentdb', 'kurrentdb+discover']), default: undefined, doc: 'EventStoreDB connection string (when SATANG_EVENT_STORE=eventstoredb)' },
  SATANG_HTTP_HOST: { codec: nonEmpty, default: '127.0.0.1', doc: 'address the HTTP API listens on' },
  SATANG_HTTP_PORT: { codec: intInRange('Port', 0, 65535), default: '8080', doc: 'port of the HTTP API' },
  SATANG_HTTP_BODY_LIMIT: { codec: intInRange('Bytes', 1024, 16_777_216), default: '262144', doc: 'largest request body accepted on any route, in bytes (413 naming the limit above it)' },
  SATANG_HTTP_MAX_FIELD_LENGTH: { codec: intInRange('Characters', 256, 1_048_576), default: '4096', doc: 'longest string or key accepted in a request body or query, in characters (400 naming the field above it; a callback is quarantined instead)' },
  SATANG_SHUTDOWN_TIMEOUT_MS: { codec: intInRange('Milliseconds', 0, 600_000), default: '10000', doc: 'on SIGTERM or Ctrl-C, the deadline of the whole stop: /readyz answers 503 at once, requests in flight finish (new ones get 503 unavailable, retriable, with Connection: close), then every role stops; what is still running at the deadline is abandoned, named on stderr, and the exit code is 1' },
  SATANG_STOP_TIMEOUT_MS: { codec: intInRange('Milliseconds', 0, 600_000), default: undefined, doc: 'deprecated name of SATANG_SHUTDOWN_TIMEOUT_MS, still read (with a warning at start) when SATANG_SHUTDOWN_TIMEOUT_MS is not set' },
  SATANG_TRUST_PROXY: { codec: proxyList, default: undefined, doc: 'addresses or CIDRs of the reverse proxies (load balancers) in front of satang, comma-separated (e.g. 10.0.0.0/8,127.0.0.1); from these peers X-Forwarded-For gives the client address (callback rate limit, logs) and X-Forwarded-Proto the scheme (the console cookie is Secure behind TLS); from any other peer those headers are ignored; unset = trust no proxy' },
  SATANG_METRICS_PORT: { codec: intInRange('Port', 0, 65535), default: undefined, doc: 'serve /metrics only on this port, bound to SATANG_METRICS_HOST, and not on SATANG_HTTP_PORT; unset = /metrics on SATANG_HTTP_PORT' },
  SATANG_METRICS_HOST: { codec: nonEmpty, default: '127.0.0.1', doc: 'address the /metrics port (SATANG_METRICS_PORT) listens on' },
  SATANG_METRICS_TOKEN_FILE: { codec: nonEmpty, default: undefined, doc: 'file holding the bearer token /metrics requires (one line: the token, or sha256:<hex> of it; generated when absent, mode 0600); unset = /metrics answers without a token' },
  SATANG_ACCESS_LOG_HEALTH: { codec: oneOf('OnOff', ['on', 'off'] as const), default: 'off', doc: 'also write access-log lines for /livez, /readyz, /healthz and /metrics (off: one line per request of every other path)' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { codec: url(['http', 'https']), default: undefined, doc: 'OpenTelemetry: base URL of the OTLP/HTTP receiver; spans go to {base}/v1/traces. Unset (and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT unset) = no tracing' },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { codec: url(['http', 'https']), default: undefined, doc: 'OpenTelemetry: full URL spans are sent to (wins over OTEL_EXPORTER_OTLP_ENDPOINT)' },
  OTEL_EXPORTER_OTLP_PROTOCOL: { codec: oneOf('OtlpProtocol', OTLP_PROTOCOLS), default: undefined, doc: 'OpenTelemetry: OTLP encoding, http/protobuf or http/json (grpc is not supported); unset = http/protobuf' },
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: { codec: oneOf('OtlpProtocol', OTLP_PROTOCOLS), default: undefined, doc: 'OpenTelemetry: OTLP encoding of spans (wins over OTEL_EXPORTER_OTLP_PROTOCOL)' },
  OTEL_SERVICE_NAME: { codec: nonEmpty, default: undefined, doc: 'OpenTelemetry: service.name of the spans; unset = satang-<role> (satang-api, satang-projector, satang-relay, satang-scheduler, satang-all)' },
  OTEL_RESOURCE_ATTRIBUTES: { codec: resourceAttributes, default: undefined, doc: 'OpenTelemetry: more resource attributes, key=value,… (values percent-encoded), e.g. deployment.environment.name=prod' },
  OTEL_TRACES_SAMPLER: { codec: oneOf('Sampler', SAMPLERS), default: 'parentbased_always_on', doc: 'OpenTelemetry: which requests are traced: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio' },
  OTEL_TRACES_SAMPLER_ARG: { codec: ratio, default: undefined, doc: 'OpenTelemetry: the ratio (0 to 1) of the traceidratio samplers; unset = 1' },
  OTEL_BSP_SCHEDULE_DELAY: { codec: intInRange('Milliseconds', 0, 600_000), default: '5000', doc: 'OpenTelemetry: how long finished spans wait before they are sent in one batch, in ms' },
  SATANG_CALLBACK_RATE_LIMIT: { codec: intInRange('PerMinute', 0, 1_000_000), default: '120', doc: 'callbacks per minute per source address that do not verify (bad signature, another merchant, unreadable) before /callbacks answers 429; verified callbacks are never limited; 0 = no limit' },
  SATANG_QUARANTINE_DAY_EVENTS: { codec: intInRange('Events', 0, 10_000_000), default: '500', doc: 'untrusted callbacks (signature not verified) kept in quarantine per callback kind and Bangkok day, across every process; past it (or SATANG_QUARANTINE_DAY_BYTES) they are answered the same but only counted (satang_quarantine_refused_total); callbacks whose signature verified are always kept' },
  SATANG_QUARANTINE_DAY_BYTES: { codec: intInRange('Bytes', 0, 1_073_741_824), default: '2097152', doc: 'bytes of event data kept in quarantine per callback kind and Bangkok day (same rule as SATANG_QUARANTINE_DAY_EVENTS)' },
  SATANG_QUARANTINE_BODY_BYTES: { codec: intInRange('Bytes', 0, 65_536), default: '2048', doc: "bytes of a quarantined callback's body kept (its start; the SHA-256 and size of the whole body are kept too)" },
  SATANG_CANONICALIZER: { codec: oneOf('Canonicalizer', Object.keys(canonicalizers)), default: 'satang-canonical-v1', doc: 'signing canonical-string strategy' },
  SATANG_GATEWAY_BASE_URL: { codec: url(['http', 'https']), default: undefined, doc: 'gateway base URL (requests go to {base}/gateway); unset = the built-in sandbox' },
  SATANG_MERCHANT_ID: { codec: merchantId, default: undefined, doc: 'merchant_id assigned by the gateway; unset with the built-in sandbox = 140000000000000001' },
  SATANG_MERCHANT_PRIVATE_KEY_FILE: { codec: nonEmpty, default: undefined, doc: 'PEM file of the merchant RSA private key (signs requests); unset with the built-in sandbox = SATANG_DATA_DIR/merchant-private.pem, generated when absent' },
  SATANG_GATEWAY_PUBLIC_KEY_FILE: { codec: nonEmpty, default: undefined, doc: "PEM file of the gateway RSA public key (verifies callbacks); the built-in sandbox's own key is used when SATANG_GATEWAY_BASE_URL is unset" },
  SATANG_GATEWAY_TIMEOUT_MS: { codec: intInRange('Milliseconds', 100, 600_000), default: '15000', doc: 'whole-request timeout for gateway calls' },
  SATANG_GATEWAY_CONNECT_TIMEOUT_MS: { codec: intInRange('Milliseconds', 50, 60_000), default: '3000', doc: 'connect timeout for gateway calls' },
  SATANG_GATEWAY_QUERY_MAX_ATTEMPTS: { codec: intInRange('Attempts', 1, 20), default: '4', doc: 'attempts for a gateway query (creates are never retried)' },
  SATANG_GATEWAY_RETRY_BASE_MS: { codec: intInRange('Milliseconds', 1, 60_000), default: '200', doc: 'first backoff delay of query retries' },
  SATANG_GATEWAY_RETRY_MAX_MS: { codec: intInRange('Milliseconds', 1, 600_000), default: '5000', doc: 'backoff cap of query retries' },
  SATANG_PAYMENT_STATUSES: { codec: statusTableJson, default: undefined, doc: 'extra payment status codes as JSON {"XX":{"meaning":"…","outcome":"pending|succeeded|failed"}}; WP, PI and PS cannot be redefined; with the built-in sandbox its failed status PF is added' },
  SATANG_REFUND_STATUSES: { codec: statusTableJson, default: undefined, doc: 'extra refund status codes, same shape; RS cannot be redefined' },
  SATANG_GATEWAY_NOT_FOUND_CODES: { codec: codeList, default: '404001', doc: 'gateway error codes that mean "no such order" (a create that never arrived)' },
  SATANG_PUBLIC_URL: { codec: url(['http', 'https']), default: undefined, doc: "base URL at which the gateway reaches satang's /callbacks; unset = http://SATANG_HTTP_HOST:SATANG_HTTP_PORT" },
  SATANG_API_TOKENS: { codec: ApiTokens, default: undefined, doc: 'merchant API bearer tokens: name:token:scope+scope,… or a JSON list of { name, token, scopes }; scopes payments:write, read, audit, reconcile:write; unset = one token with every scope, generated into SATANG_DATA_DIR/api-token' },
  SATANG_API_TOKENS_FILE: { codec: nonEmpty, default: undefined, doc: 'file holding SATANG_API_TOKENS, in the same format (a Docker or Compose secret); set this or SATANG_API_TOKENS, not both' },
  SATANG_SESSION_SECRET_FILE: { codec: nonEmpty, default: undefined, doc: 'file holding the secret that signs console sessions (one line of at least 32 characters, e.g. openssl rand -hex 32; a Docker or Compose secret), the same file for every api process of one installation; unset = SATANG_DATA_DIR/session-secret, generated when absent (mode 0600)' },
  SATANG_OIDC_ISSUER_URL: { codec: url(['http', 'https']), default: undefined, doc: "issuer URL of the company's OpenID Connect provider, for single sign-on to the console (docs/console-users.md); http only for a provider on this machine (127.0.0.1, localhost); unset = no single sign-on" },
  SATANG_OIDC_CLIENT_ID: { codec: nonEmpty, default: undefined, doc: "satang's client id at the OpenID Connect provider (needed with SATANG_OIDC_ISSUER_URL)" },
  SATANG_OIDC_CLIENT_SECRET_FILE: { codec: nonEmpty, default: undefined, doc: "file holding satang's client secret at the OpenID Connect provider (one line; a Docker or Compose secret; needed with SATANG_OIDC_ISSUER_URL)" },
  SATANG_OIDC_REDIRECT_URL: { codec: url(['http', 'https']), default: undefined, doc: "the console's callback URL registered at the provider, ending in /console/openid/callback, e.g. https://satang.example/console/openid/callback (needed with SATANG_OIDC_ISSUER_URL)" },
  SATANG_OIDC_ROLE_CLAIM: { codec: nonEmpty, default: 'satang_roles', doc: 'the claim (of the ID token, else of the userinfo answer) whose values finance, auditor or admin are the console roles of the user signing in; a user with none of them is refused' },
  SATANG_OIDC_SCOPES: { codec: nonEmpty, default: 'openid profile email', doc: 'the scopes asked of the OpenID Connect provider (openid is required; add the one that releases the role claim, if the provider has one)' },
  SATANG_SANDBOX_PORT: { codec: intInRange('Port', 0, 65535), default: '7070', doc: 'port of the built-in sandbox gateway (only when SATANG_GATEWAY_BASE_URL is unset)' },
  SATANG_RESOLVE_MAX_ATTEMPTS: { codec: intInRange('Attempts', 1, 100), default: '6', doc: 'payment queries that resolve an unknown create outcome right away (the rest is resolved at the next start)' },
  SATANG_RESOLVE_BASE_MS: { codec: intInRange('Milliseconds', 1, 600_000), default: '500', doc: 'first wait between those queries; it doubles each time, up to 30 s' },
  SATANG_READY_MAX_LAG_SECONDS: { codec: intInRange('Seconds', 1, 86_400), default: '60', doc: "the projector role's /readyz answers 503 when a projection is further behind the log than this" },
  SATANG_PROJECTOR: { codec: oneOf('OnOff', ['on', 'off'] as const), default: 'on', doc: 'run the projector (read models) inside satang up; off when a separate satang project process runs it' },
  SATANG_PROJECTOR_BATCH_SIZE: { codec: intInRange('Events', 1, 50_000), default: '5000', doc: 'events per projector batch (one transaction per projection per batch)' },
  SATANG_HORIZON_WARN_SECONDS: { codec: intInRange('Seconds', 1, 86_400), default: '10', doc: 'a reader of the event log (projector, relay, subscriber) held back this long by an append transaction still open logs a warning naming its pid and transaction id (docs/operations.md "Event store operations")' },
  SATANG_STREAM_CACHE_BYTES: { codec: intInRange('Bytes', 0, 4_294_967_296), default: '16777216', doc: 'most bytes of stream states the API process keeps in its stream cache (an estimate of their heap size; least recently used out past it, as past SATANG_STREAM_CACHE_SIZE; satang_stream_cache_bytes on /metrics); 0 = no cache' },
  SATANG_STREAM_CACHE_SIZE: { codec: intInRange('Streams', 0, 1_000_000), default: '10000', doc: "order, refund and subscription streams whose state (and revision) the API process keeps in memory, least recently used out, so a command on a known stream appends without reading it first; a stale entry only costs a re-read (the append's expected revision guards it); 0 = no cache" },
  SATANG_KAFKA_BROKERS: { codec: brokerList, default: undefined, doc: 'Kafka bootstrap brokers host:port,…; set = the relay publishes every event to SATANG_KAFKA_TOPIC (inside satang up, or as satang relay); unset = no relay' },
  SATANG_KAFKA_TOPIC: { codec: topicName, default: 'satang.events', doc: 'the topic the relay publishes to (created if absent); the relay keeps one checkpoint per topic' },
  SATANG_KAFKA_TOPIC_PARTITIONS: { codec: intInRange('Partitions', 1, 10_000), default: '6', doc: 'partitions of the topic when the relay creates it (an existing topic is left as it is)' },
  SATANG_KAFKA_TOPIC_REPLICATION: { codec: intInRange('ReplicationFactor', 1, 32), default: '1', doc: 'replication factor of the topic when the relay creates it (3 on a production cluster)' },
  SATANG_KAFKA_CLIENT_ID: { codec: nonEmpty, default: 'satang-relay', doc: 'Kafka client id of the relay (broker logs, quotas)' },
  SATANG_KAFKA_SOURCE: { codec: uriReference, default: '/satang', doc: 'the CloudEvents source (ce_source header) of every message' },
  SATANG_KAFKA_BATCH_SIZE: { codec: intInRange('Events', 1, 50_000), default: '5000', doc: 'most events the relay publishes in one round (acknowledged before the checkpoint moves)' },
  SATANG_KAFKA_BATCH_BYTES: { codec: intInRange('Bytes', 16_384, 100_000_000), default: '900000', doc: "most bytes of keys, values and headers in one produce request; a round larger than this is sent as several requests, in order (keep it below the broker's message.max.bytes)" },
  SATANG_KAFKA_TIMEOUT_MS: { codec: intInRange('Milliseconds', 1_000, 600_000), default: '30000', doc: 'how long the broker may take to acknowledge a request, and to connect' },
  SATANG_KAFKA_RETRY_BASE_MS: { codec: intInRange('Milliseconds', 10, 60_000), default: '500', doc: 'first wait before the relay retries after a failure (broker down, topic missing); it doubles each time' },
  SATANG_KAFKA_RETRY_MAX_MS: { codec: intInRange('Milliseconds', 100, 600_000), default: '30000', doc: "longest wait between the relay's retries" },
  SATANG_KAFKA_SASL_MECHANISM: { codec: oneOf('SaslMechanism', ['plain', 'scram-sha-256', 'scram-sha-512'] as const), default: undefined, doc: 'SASL authentication of the relay to the brokers: plain, scram-sha-256 or scram-sha-512 (needs SATANG_KAFKA_SASL_USERNAME and a password; use it with SATANG_KAFKA_SSL=true); unset = no SASL' },
  SATANG_KAFKA_SASL_PASSWORD: { codec: nonEmpty, default: undefined, doc: 'the SASL password itself, for convenience (never printed or logged); prefer SATANG_KAFKA_SASL_PASSWORD_FILE; set one of the two, not both' },
  SATANG_KAFKA_SASL_PASSWORD_FILE: { codec: nonEmpty, default: undefined, doc: 'file holding the SASL password (one line; a Docker or Compose secret), read at start' },
  SATANG_KAFKA_SASL_USERNAME: { codec: nonEmpty, default: undefined, doc: 'the SASL user (with SATANG_KAFKA_SASL_MECHANISM)' },
  SATANG_KAFKA_SSL: { codec: oneOf('Boolean', ['true', 'false'] as const), default: 'false', doc: "true = the relay connects to the brokers over TLS (checking the brokers' certificates against SATANG_KAFKA_SSL_CA_FILE, or the system's trust store)" },
  SATANG_KAFKA_SSL_CA_FILE: { codec: nonEmpty, default: undefined, doc: "PEM file of the CA certificate(s) that sign the brokers' certificates (with SATANG_KAFKA_SSL=true); unset = the system's trust store" },
  SATANG_KAFKA_SSL_CERT_FILE: { codec: nonEmpty, default: undefined, doc: "mutual TLS: PEM file of the relay's client certificate (with SATANG_KAFKA_SSL_KEY_FILE)" },
  SATANG_KAFKA_SSL_KEY_FILE: { codec: nonEmpty, default: undefined, doc: "mutual TLS: PEM file of the client certificate's private key (unencrypted; with SATANG_KAFKA_SSL_CERT_FILE)" },
  SATANG_KAFKA_SSL_REJECT_UNAUTHORIZED: { codec: oneOf('Boolean', ['true', 'false'] as const), default: 'true', doc: "false = accept a broker certificate that does not verify (a loud warning at start; never in production: anyone on the path can read and change the events)" },
  SATANG_RECONCILE_CONCURRENCY: { codec: intInRange('Queries', 1, 256), default: '16', doc: 'gateway queries a reconciliation run has in flight at once (satang reconcile --concurrency overrides it)' },
  SATANG_RECONCILE_NOT_FOUND_GRACE_MINUTES: { codec: intInRange('Minutes', 0, 10_080), default: '60', doc: 'a "not found" answer about an order or refund satang holds is a missing_at_gateway break only this long after satang saw it accepted' },
  SATANG_RECONCILE_STALE_PENDING_HOURS: { codec: intInRange('Hours', 1, 8760), default: '24', doc: 'a status both sides still call pending becomes stale_pending this long past the link expiry (the gateway due_date, else the creation)' },
  SATANG_RECONCILE_CHARGE_GRACE_HOURS: { codec: intInRange('Hours', 0, 720), default: '24', doc: 'a subscription charge due on a day is missing_charge when nothing was observed this long after that Bangkok day ended' },
  SATANG_RECONCILE_SCHEDULER: { codec: oneOf('OnOff', ['on', 'off'] as const), default: 'on', doc: 'run the reconciliation scheduler inside satang up (daily run and sweeps; one process acts per database)' },
  SATANG_RECONCILE_DAILY_AT: { codec: timeOfDay, default: '00:30', doc: 'Bangkok time of day after which the scheduler reconciles the day before' },
  SATANG_RECONCILE_SWEEP_MINUTES: { codec: intInRange('Minutes', 0, 1440), default: '5', doc: 'minutes between sweeps of items still pending (heals missed notifications); 0 turns sweeps off' },
  SATANG_RECONCILE_SWEEP_MIN_AGE_MINUTES: { codec: intInRange('Minutes', 0, 10_080), default: '15', doc: 'a sweep checks only pending items at least this old (younger ones may still get their notification)' },
  SATANG_FAULT_CRASH_AFTER: { codec: oneOf('CrashPoint', CRASH_POINTS), default: undefined, doc: 'fault injection for tests only: SIGKILL the process right after PaymentRequested is stored (nothing sent), right after the gateway answered a create (outcome not stored), in the middle of the third projector batch (ProjectionBatch: one projection written, not committed), or after the second batch of a reconciliation run is appended (ReconcileBatch)' },
} as const

type Settings = typeof settings
export type SettingName = keyof Settings
export type Config = { readonly [K in SettingName]: Settings[K]['default'] extends string ? t.TypeOf<Settings[K]['codec']> : t.TypeOf<Settings[K]['codec']> | undefined }

/** One setting that failed: the variable, where it came from, and the rule (never the value). */
export type ConfigError = { readonly variable: string; readonly source: 'environment' | 'config file'; readonly rule: string }

export const settingDocs = (): ReadonlyArray<{ name: SettingName; default: string | undefined; doc: string }> =>
  (Object.keys(settings) as SettingName[]).map((name) => ({ name, default: settings[name].default, doc: settings[name].doc }))

const isSettingName = (k: string): k is SettingName => Object.hasOwn(settings, k)

const ruleOf = (errors: t.Errors): string => errors.map((e) => e.message ?? 'is invalid').filter((m, i, all) => all.indexOf(m) === i).join('; ')

/**
 * Decodes configuration from an environment and an optional parsed config file. Unknown `SATANG_*`
 * variables are reported too, because a typo silently falling back to a default is worse than an error.
 */
export const decodeConfig = (env: Readonly<Record<string, string | undefined>>, file: Readonly<Record<string, unknown>> = {}): E.Either<ReadonlyArray<ConfigError>, Config> => {
  const errors: ConfigError[] = []
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(file)) {
    if (!isSettingName(key)) errors.push({ variable: key, source: 'config file', rule: 'is not a satang setting' })
  }
  for (const key of Object.keys(env)) {
    if (key.startsWith('SATANG_') && key !== 'SATANG_CONFIG' && !key.startsWith('SATANG_TEST_') && !isSettingName(key)) {
      errors.push({ variable: key, source: 'environment', rule: 'is not a satang setting' })
    }
  }
  for (const name of Object.keys(settings) as SettingName[]) {
    const spec = settings[name]
    const fromEnv = env[name]
    const raw: unknown = fromEnv !== undefined && fromEnv !== '' ? fromEnv : file[name] ?? spec.default
    if (raw === undefined) continue
    const decoded = spec.codec.decode(raw)
    if (E.isLeft(decoded)) {
      errors.push({ variable: name, source: fromEnv !== undefined && fromEnv !== '' ? 'environment' : 'config file', rule: ruleOf(decoded.left) })
    } else out[name] = decoded.right
  }
  if (out['SATANG_EVENT_STORE'] === 'eventstoredb' && out['SATANG_EVENTSTOREDB_URL'] === undefined) {
    errors.push({ variable: 'SATANG_EVENTSTOREDB_URL', source: 'environment', rule: 'is required when SATANG_EVENT_STORE=eventstoredb' })
  }
  if (out['SATANG_API_TOKENS'] !== undefined && out['SATANG_API_TOKENS_FILE'] !== undefined) {
    errors.push({ variable: 'SATANG_API_TOKENS_FILE', source: 'environment', rule: 'cannot be set together with SATANG_API_TOKENS: set one of the two' })
  }
  if (out['SATANG_METRICS_PORT'] !== undefined && out['SATANG_METRICS_PORT'] !== 0 && out['SATANG_METRICS_PORT'] === out['SATANG_HTTP_PORT']) {
    errors.push({ variable: 'SATANG_METRICS_PORT', source: 'environment', rule: 'must differ from SATANG_HTTP_PORT (unset it to serve /metrics there)' })
  }
  if (out['SATANG_DATABASE_PASSWORD_FILE'] !== undefined && out['SATANG_DATABASE_URL'] === undefined) {
    errors.push({ variable: 'SATANG_DATABASE_PASSWORD_FILE', source: 'environment', rule: 'needs SATANG_DATABASE_URL (the password is for its user)' })
  }
  if (out['SATANG_DATABASE_OWNER_URL'] !== undefined && out['SATANG_DATABASE_URL'] === undefined) {
    errors.push({ variable: 'SATANG_DATABASE_OWNER_URL', source: 'environment', rule: 'needs SATANG_DATABASE_URL (the service role the owner grants to)' })
  }
  if (out['SATANG_DATABASE_OWNER_PASSWORD_FILE'] !== undefined && out['SATANG_DATABASE_OWNER_URL'] === undefined) {
    errors.push({ variable: 'SATANG_DATABASE_OWNER_PASSWORD_FILE', source: 'environment', rule: 'needs SATANG_DATABASE_OWNER_URL (the password is for its user)' })
  }
  errors.push(...openIdProblems(out))
  if (out['SATANG_GATEWAY_BASE_URL'] !== undefined) {
    for (const needed of ['SATANG_MERCHANT_ID', 'SATANG_MERCHANT_PRIVATE_KEY_FILE', 'SATANG_GATEWAY_PUBLIC_KEY_FILE'] as const) {
      if (out[needed] === undefined) errors.push({ variable: needed, source: 'environment', rule: 'is required when SATANG_GATEWAY_BASE_URL is set' })
    }
  }
  // The old name of the stop deadline still works when the new one is not given (a warning at start says so).
  const shutdownGiven = (env['SATANG_SHUTDOWN_TIMEOUT_MS'] ?? '') !== '' || file['SATANG_SHUTDOWN_TIMEOUT_MS'] !== undefined
  if (!shutdownGiven && out['SATANG_STOP_TIMEOUT_MS'] !== undefined) out['SATANG_SHUTDOWN_TIMEOUT_MS'] = out['SATANG_STOP_TIMEOUT_MS']
  errors.push(...kafkaSecurityErrors(out))
  // The record was filled from `settings` by name, each value decoded by that setting's codec.
  return errors.length > 0 ? E.left(errors) : E.right(out as Config)
}

/** Settings that work but should change: a deprecated name in use. */
export const configWarnings = (config: Config): ReadonlyArray<string> =>
  config.SATANG_STOP_TIMEOUT_MS === undefined ? [] : ['SATANG_STOP_TIMEOUT_MS is deprecated: rename it SATANG_SHUTDOWN_TIMEOUT_MS (the new name wins when both are set)']
/** Kafka TLS and SASL settings that do not go together (the files themselves are read at start). */
const kafkaSecurityErrors = (out: Readonly<Record<string, unknown>>): ReadonlyArray<ConfigError> => {
  const errors: ConfigError[] = []
  const set = (name: string): boolean => out[name] !== undefined
  const error = (variable: string, rule: string): void => void errors.push({ variable, source: 'environment', rule })
  if (set('SATANG_KAFKA_SASL_MECHANISM')) {
    if (!set('SATANG_KAFKA_SASL_USERNAME')) error('SATANG_KAFKA_SASL_USERNAME', 'is required when SATANG_KAFKA_SASL_MECHANISM is set')
    if (!set('SATANG_KAFKA_SASL_PASSWORD_FILE') && !set('SATANG_KAFKA_SASL_PASSWORD')) error('SATANG_KAFKA_SASL_PASSWORD_FILE', 'is required when SATANG_KAFKA_SASL_MECHANISM is set (or SATANG_KAFKA_SASL_PASSWORD)')
  } else {
    for (const name of ['SATANG_KAFKA_SASL_USERNAME', 'SATANG_KAFKA_SASL_PASSWORD_FILE', 'SATANG_KAFKA_SASL_PASSWORD']) {
      if (set(name)) error('SATANG_KAFKA_SASL_MECHANISM', `is required when ${name} is set (plain, scram-sha-256 or scram-sha-512)`)
    }
  }
  if (set('SATANG_KAFKA_SASL_PASSWORD_FILE') && set('SATANG_KAFKA_SASL_PASSWORD')) error('SATANG_KAFKA_SASL_PASSWORD_FILE', 'cannot be set together with SATANG_KAFKA_SASL_PASSWORD: set one of the two')
  if (set('SATANG_KAFKA_SSL_KEY_FILE') && !set('SATANG_KAFKA_SSL_CERT_FILE')) error('SATANG_KAFKA_SSL_CERT_FILE', 'is required when SATANG_KAFKA_SSL_KEY_FILE is set (the certificate of that key)')
  if (set('SATANG_KAFKA_SSL_CERT_FILE') && !set('SATANG_KAFKA_SSL_KEY_FILE')) error('SATANG_KAFKA_SSL_KEY_FILE', 'is required when SATANG_KAFKA_SSL_CERT_FILE is set (the private key of that certificate)')
  if (out['SATANG_KAFKA_SSL'] !== 'true') {
    for (const name of ['SATANG_KAFKA_SSL_CA_FILE', 'SATANG_KAFKA_SSL_CERT_FILE', 'SATANG_KAFKA_SSL_KEY_FILE']) {
      if (set(name)) error('SATANG_KAFKA_SSL', `must be true when ${name} is set`)
    }
    if (out['SATANG_KAFKA_SSL_REJECT_UNAUTHORIZED'] === 'false') error('SATANG_KAFKA_SSL', 'must be true when SATANG_KAFKA_SSL_REJECT_UNAUTHORIZED is set')
  }
  return errors
}

const OPENID_SETTINGS = ['SATANG_OIDC_CLIENT_ID', 'SATANG_OIDC_CLIENT_SECRET_FILE', 'SATANG_OIDC_REDIRECT_URL'] as const

/** Single sign-on needs its four settings together; plain HTTP only to a provider on this machine. */
const openIdProblems = (out: Readonly<Record<string, unknown>>): ReadonlyArray<ConfigError> => {
  const issuer = out['SATANG_OIDC_ISSUER_URL']
  if (typeof issuer !== 'string') return OPENID_SETTINGS.filter((n) => out[n] !== undefined).map((variable) => ({ variable, source: 'environment', rule: 'needs SATANG_OIDC_ISSUER_URL (single sign-on is off without it)' }))
  const problems: ConfigError[] = OPENID_SETTINGS.filter((n) => out[n] === undefined).map((variable) => ({ variable, source: 'environment', rule: 'is required when SATANG_OIDC_ISSUER_URL is set' }))
  const u = new URL(issuer)
  if (u.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) problems.push({ variable: 'SATANG_OIDC_ISSUER_URL', source: 'environment', rule: 'must be https (http only for a provider on this machine: 127.0.0.1, localhost)' })
  const redirect = out['SATANG_OIDC_REDIRECT_URL']
  if (typeof redirect === 'string' && !new URL(redirect).pathname.endsWith('/console/openid/callback')) problems.push({ variable: 'SATANG_OIDC_REDIRECT_URL', source: 'environment', rule: 'must end in /console/openid/callback (the console route that takes the answer)' })
  const scopes = out['SATANG_OIDC_SCOPES']
  if (typeof scopes === 'string' && !scopes.split(/\s+/).includes('openid')) problems.push({ variable: 'SATANG_OIDC_SCOPES', source: 'environment', rule: 'must include openid' })
  return problems
}

export const formatConfigErrors = (errors: ReadonlyArray<ConfigError>): string =>
  ['invalid configuration:', ...errors.map((e) => `  ${e.variable} (${e.source}): ${e.rule}`)].join('\n')
