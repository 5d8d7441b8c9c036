/** Node's flags for the heap of satang's long-running commands (see heap.js). */
export declare const HEAP_FLAGS: ReadonlyArray<string>
/** Restarts this process with HEAP_FLAGS for `up`, `project` and `relay`, unless the operator set either flag. */
export declare const restartWithHeapFlags: (argv: ReadonlyArray<string>) => void
