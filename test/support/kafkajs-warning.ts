/**
 * The tests and the bench read the topic with kafkajs, a client independent of the relay's own
 * (@platformatic/kafka), so that the message contract is checked by a second implementation. On Node 24
 * kafkajs 2.2.4 calls setTimeout with a negative delay from one place, its request queue's
 * `scheduleCheckPendingRequests` (`throttledUntil` starts at -1), and Node prints a
 * `TimeoutNegativeWarning` for it (Node uses 1 ms instead: harmless). This drops that one warning, from
 * that one source; every other warning is printed as Node prints it.
 */
const KNOWN_SOURCE = /kafkajs[\\/]src[\\/]network[\\/]requestQueue[\\/]index\.js/

/** Whether `w` is kafkajs's negative-timeout warning from its request queue. */
export const isKafkajsNegativeTimeout = (w: Error): boolean => w.name === 'TimeoutNegativeWarning' && KNOWN_SOURCE.test(w.stack ?? '')

let installed = false

/** Installs the filter in this process (once). */
export const filterKafkajsNegativeTimeoutWarning = (): void => {
  if (installed) return
  installed = true
  const printers = process.listeners('warning')
  process.removeAllListeners('warning')
  process.on('warning', (w: Error) => {
    if (isKafkajsNegativeTimeout(w)) return
    for (const print of printers) print(w)
  })
}
