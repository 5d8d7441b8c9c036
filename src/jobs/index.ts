export { startRelay, type Relay, type RelayConfig, type RelayDeps, type RelayError, type RelayErrorKind, type RelayRole, type RelayRuntime } from './relay/relay.ts'
export { readRelayStatus, readRelayStatuses, type RelayState, type RelayStatus } from './relay/relay-status.ts'
export { createRelayCheckpointsTable, RELAY_CHECKPOINTS_TABLE } from './relay/relay-checkpoint.ts'
