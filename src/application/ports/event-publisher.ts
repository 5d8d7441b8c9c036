import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { RecordedEvent } from './event-store.ts'

/**
 * What went wrong while publishing, in words an operator can act on:
 * - `unreachable`: no broker answered (down, wrong address, network);
 * - `topic`: the destination is missing and could not be created, or is not usable;
 * - `rejected`: a broker refused the messages (too large, not authorised, invalid);
 * - `timeout`: a broker did not acknowledge in time (the messages may or may not have been written);
 * - `authentication`: a broker refused the credentials (SASL mechanism, user, password);
 * - `tls`: the TLS handshake failed (the broker's certificate is not trusted, or names another host).
 */
export type PublishFailureKind = 'unreachable' | 'topic' | 'rejected' | 'timeout' | 'authentication' | 'tls'

/** An operational failure of the publisher, with `retriable` and `cause` as the Kafka client reports them. */
export type PublishFailure = {
  readonly _tag: 'PublishFailure'
  readonly kind: PublishFailureKind
  /** One line naming what failed and where (brokers, topic), never a secret. */
  readonly message: string
  readonly retriable: boolean
  readonly cause: unknown
}

/** Where events go, as the publisher found (or made) it. */
export type Destination = {
  /** Human description: the topic and the brokers. */
  readonly description: string
  readonly partitions: number
  /** Whether `prepare` created it just now. */
  readonly created: boolean
}

/** What a publish did: the first `published` events of it are acknowledged; `refused`, when not null, names the event after them and why it was not published. */
export type Published = { readonly published: number; readonly refused: string | null }

/**
 * Publishes stored events, in the order given, to downstream consumers (the Kafka topic). At least once:
 * a batch that failed may have been written in part, and is published again by the caller.
 */
export type EventPublisher = {
  /** Connects and makes sure the destination exists (creating it when it is absent). */
  readonly prepare: () => TE.TaskEither<PublishFailure, Destination>
  /**
   * Publishes the events in this order and resolves once every one is acknowledged by the broker (all
   * in-sync replicas). Events of one stream keep their order for consumers.
   *
   * Each event's data is checked first against the codec of its type and schema version (the domain's
   * registry): the publisher publishes only the events before the first that fails, and resolves with
   * how many it published and which one it refused, and why (`<stream> revision <n> at position <p>:
   * <why>`). Nothing after a refused event is published; the caller must not pass over it.
   */
  readonly publish: (events: ReadonlyArray<RecordedEvent>) => TE.TaskEither<PublishFailure, Published>
  /** Disconnects; `prepare` may connect again. */
  readonly close: () => Promise<void>
}
