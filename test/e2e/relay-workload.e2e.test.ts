import { describeRelayWorkload } from './relay-workload-suite.ts'

/** The relay workload (relay-workload-suite.ts) over the test broker's PLAINTEXT listener. */
await describeRelayWorkload('plaintext')
