/** The oldest Node that runs satang's TypeScript sources directly (see node-version.js). */
export declare const MINIMUM_NODE: string
/** Whether `version` (as in process.versions.node: '24.21.0') is MINIMUM_NODE or newer. */
export declare const recentEnough: (version: string) => boolean
