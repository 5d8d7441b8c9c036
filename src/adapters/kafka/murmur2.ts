/*
 * The partition of a key as Kafka's Java client picks it (its default partitioner for a keyed record):
 * murmur2 of the key's bytes (seed 0x9747b28c), the sign bit cleared, modulo the topic's partitions.
 * Every client that is "Java compatible" computes the same, so a consumer or another producer finds a
 * stream's partition from its name alone.
 *
 * Written here in 32-bit integer arithmetic (`Math.imul`, unsigned shifts) because the client's own
 * (@platformatic/kafka's `murmur2`) computes it with BigInt, which was a tenth of the producer thread's
 * time; the tests hold this one to the client's on random keys and to kafkajs's partitioner on the
 * real broker.
 */

const SEED = 0x9747b28c
const M = 0x5bd1e995

/** Kafka's murmur2 (`org.apache.kafka.common.utils.Utils.murmur2`) of `data`, as a signed 32-bit integer. */
export const murmur2 = (data: Uint8Array): number => {
  const length = data.length
  let h = SEED ^ length
  const blocks = length - (length % 4)
  for (let i = 0; i < blocks; i += 4) {
    let k = (data[i] ?? 0) | ((data[i + 1] ?? 0) << 8) | ((data[i + 2] ?? 0) << 16) | ((data[i + 3] ?? 0) << 24)
    k = Math.imul(k, M)
    k ^= k >>> 24
    k = Math.imul(k, M)
    h = Math.imul(h, M) ^ k
  }
  const rest = length % 4
  if (rest > 0) {
    if (rest === 3) h ^= (data[blocks + 2] ?? 0) << 16
    if (rest >= 2) h ^= (data[blocks + 1] ?? 0) << 8
    h ^= data[blocks] ?? 0
    h = Math.imul(h, M)
  }
  h ^= h >>> 13
  h = Math.imul(h, M)
  h ^= h >>> 15
  return h
}

/** The partition of `key` among `partitions`, as the Java client's default partitioner picks it. */
export const javaPartitionOf = (key: Uint8Array, partitions: number): number => (murmur2(key) & 0x7fffffff) % partitions
