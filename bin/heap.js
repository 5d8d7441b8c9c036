// V8's heap for satang's long-running commands (issue 31). Left to its defaults, V8 sizes the young
// generation at up to 3 × 32 MiB and lets the old generation grow to several times what is live before
// a full collection, because it assumes the machine's whole memory is there for one process: `satang up`
// held 474 MiB of RSS after catching up 20,000 orders, with 40 MiB of it live JavaScript objects (heap
// snapshot), the rest garbage not yet collected. These flags keep the heap near what is live; they
// can only be set when Node starts, so the process restarts itself with them (process.execve: the same
// pid, nothing started yet). Plain JavaScript, like satang.js.
//
// NODE_OPTIONS or node's own arguments that set either flag win: the process is then left as it is.

/** Commands that run until stopped or work through the whole log. */
const LONG_RUNNING = new Set(['up', 'project', 'relay'])

/**
 * --max-semi-space-size=4: young generation collections every few MiB of allocation instead of every
 * 32 (the objects of one request or one page die young either way). --max-old-space-size=512: with a
 * limit at this size V8 grows the old generation by about 1.4 × what is live after each collection
 * (with the default multi-GiB limit, by up to 4 ×); it is also where the process stops with "heap out of
 * memory" instead of being killed by the container, far above what satang keeps live (docs/operations.md
 * "Memory").
 */
export const HEAP_FLAGS = ['--max-semi-space-size=4', '--max-old-space-size=512']

/**
 * `satang relay` turns a whole batch (5,000 events by default) into produce requests at once and holds
 * it, with the next one read ahead, until the broker acknowledges it: its live heap is several times the
 * others', and with a 512 MiB limit V8 grows the old generation by only ~1.4 × what is live, so it ran a
 * full collection every few batches. CPU of the relay per 1,000 events drained (bench --only relay's
 * log, runs alternating, load average 10–14): 196–211 ms with the flags above, 106–128 ms (peak RSS
 * 205–210 MiB) with these, 94–102 ms (310–320 MiB) with a 2 GiB limit or none.
 */
export const RELAY_HEAP_FLAGS = ['--max-semi-space-size=16', '--max-old-space-size=1024']

/** The heap flags of `command` (undefined: none, Node as it is). */
export const heapFlagsOf = (command) => (command === 'relay' ? RELAY_HEAP_FLAGS : LONG_RUNNING.has(command) ? HEAP_FLAGS : undefined)

const flagName = (arg) => arg.replace(/^--/, '').split('=')[0].replaceAll('_', '-')

/** Restarts this process with HEAP_FLAGS for a long-running command; returns when there is nothing to do. */
export const restartWithHeapFlags = (argv) => {
  const flags = heapFlagsOf(argv[2] ?? '')
  if (flags === undefined || typeof process.execve !== 'function' || process.platform === 'win32') return
  const given = new Set([...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].filter((a) => a.startsWith('--')).map(flagName))
  if (flags.some((f) => given.has(flagName(f)))) return
  process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...argv.slice(1)], process.env)
}
