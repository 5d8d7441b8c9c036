import { describeRelayWorkload } from './relay-workload-suite.ts'

/**
 * The relay workload (relay-workload-suite.ts) over the test broker's SASL_SSL listener, SCRAM-SHA-512:
 * the same checks as over PLAINTEXT (every event once per ce_id, revision order per key, the same headers
 * and values). Never skipped in CI: without the SATANG_TEST_KAFKA_SECURE_* variables it fails there.
 */
await describeRelayWorkload('secure')
