/** Node's flags for the heap of satang's long-running commands (see heap.js). */
export declare const HEAP_FLAGS: ReadonlyArray<string>
/** The same for `satang relay`: a larger young generation (see heap.js). */
export declare const RELAY_HEAP_FLAGS: ReadonlyArray<string>
/** The heap flags of a command; undefined for the commands that run with Node as it is. */
export declare const heapFlagsOf: (command: string) => ReadonlyArray<string> | undefined
/** Restarts this process with the heap flags of `up`, `project` or `relay`, unless the operator set either flag. */
export declare const restartWithHeapFlags: (argv: ReadonlyArray<string>) => void
