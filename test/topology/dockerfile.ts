import { readFileSync } from 'node:fs'
import { DockerfileParser, type Instruction } from 'dockerfile-ast'
import { ROOT } from './compose-file.ts'

/** The Dockerfile, parsed (dockerfile-ast), split into its stages. */
export type Stage = { readonly name: string | undefined; readonly image: string; readonly instructions: ReadonlyArray<Instruction> }

export const DOCKERFILE_TEXT = readFileSync(new URL('Dockerfile', ROOT), 'utf8')

export const dockerfileStages = (): ReadonlyArray<Stage> => {
  const parsed = DockerfileParser.parse(DOCKERFILE_TEXT)
  const stages: Array<{ name: string | undefined; image: string; instructions: Instruction[] }> = []
  for (const i of parsed.getInstructions()) {
    if (i.getKeyword() === 'FROM') {
      const from = parsed.getFROMs().find((f) => f.getRange().start.line === i.getRange().start.line)
      stages.push({ name: from?.getBuildStage() ?? undefined, image: from?.getImage() ?? '', instructions: [] })
    }
    stages.at(-1)?.instructions.push(i)
  }
  return stages
}

/** `ENV` of a stage as name → value. */
export const envOf = (stage: Stage): Readonly<Record<string, string>> => {
  const parsed = DockerfileParser.parse(DOCKERFILE_TEXT)
  const lines = new Set(stage.instructions.map((i) => i.getRange().start.line))
  const out: Record<string, string> = {}
  for (const env of parsed.getENVs()) {
    if (!lines.has(env.getRange().start.line)) continue
    for (const p of env.getProperties()) out[p.getName()] = p.getValue() ?? ''
  }
  return out
}

export const instructionsOf = (stage: Stage, keyword: string): ReadonlyArray<string> =>
  stage.instructions.filter((i) => i.getKeyword() === keyword).map((i) => i.getArgumentsContent() ?? '')
