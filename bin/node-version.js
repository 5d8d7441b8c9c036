// The Node rule satang's CLI and its tests share: satang's TypeScript runs as Node runs it (type
// stripping, no build step), which needs Node >= 22.18. Plain JavaScript that parses on Node 18:
// bin/satang.js imports it before it hands an older Node's command over to the Node 24 of `npm ci`.

/** The oldest Node that runs satang's TypeScript sources directly. */
export const MINIMUM_NODE = '22.18'

const [minimumMajor, minimumMinor] = MINIMUM_NODE.split('.').map(Number)

/** Whether `version` (as in process.versions.node: '24.21.0') is MINIMUM_NODE or newer. */
export const recentEnough = (version) => {
  const [major, minor] = version.split('.').map(Number)
  return major > minimumMajor || (major === minimumMajor && minor >= minimumMinor)
}
