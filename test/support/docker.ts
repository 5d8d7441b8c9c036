import { getContainerRuntimeClient } from 'testcontainers'

/** Why no Docker engine can be reached (for tests that would start a container), or undefined when one can. */
export const dockerProblem = async (): Promise<string | undefined> => {
  try {
    await getContainerRuntimeClient()
    return undefined
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
}
