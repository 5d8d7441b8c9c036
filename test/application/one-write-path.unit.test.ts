import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { DomainEventMetadata } from '../../src/domain/events/metadata.ts'
import { isLintProbe } from '../support/lint-probe.ts'

/*
 * One write path: the metadata of an event (who caused it, when, from where) is made in one place,
 * `toAppend` in src/application/streams.ts, so a change to it (a trace context, say) is one change.
 * These checks read the source of src/ and fail when another place builds the metadata itself.
 */

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)))
const WRITE_PATH = 'src/application/streams.ts'
/**
 * The metadata's schema and its encoding into the store port's shape (`toStoreMetadata`, which copies
 * a metadata value member by member, and which only the write path calls in src/; tests build fixtures with it).
 */
const SCHEMA = 'src/domain/events/metadata.ts'
const ENCODING = `${SCHEMA} (toStoreMetadata)`

const sources = (): ReadonlyArray<{ readonly file: string; readonly source: ts.SourceFile }> =>
  readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !isLintProbe(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort()
    .map((file) => ({ file, source: ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true) }))

const nodesOf = (node: ts.Node): ts.Node[] => {
  const all: ts.Node[] = [node]
  ts.forEachChild(node, (child) => {
    all.push(...nodesOf(child))
  })
  return all
}

/** The metadata every event must carry (the codec's required members). */
const REQUIRED_KEYS: ReadonlyArray<string> = Object.keys(DomainEventMetadata.types[0].props)

const keysOf = (o: ts.ObjectLiteralExpression): ReadonlyArray<string> =>
  o.properties.flatMap((p) => (p.name !== undefined && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [p.name.text] : []))

/** The members of an io-ts codec (`t.type({ … })`): a schema, not a value. */
const isCodecProps = (o: ts.ObjectLiteralExpression): boolean =>
  ts.isCallExpression(o.parent) && ts.isPropertyAccessExpression(o.parent.expression) && ts.isIdentifier(o.parent.expression.expression) && o.parent.expression.expression.text === 't'

/**
 * An object literal that names the instant of recording and most of the other required members builds
 * event metadata (a `Cause` names the ids only, the Kafka header table no instant).
 */
const buildsMetadata = (o: ts.ObjectLiteralExpression): boolean => {
  const keys = keysOf(o)
  return keys.includes('recordedAt') && REQUIRED_KEYS.filter((k) => keys.includes(k)).length >= REQUIRED_KEYS.length - 1 && !isCodecProps(o)
}

/** `file (the declaration it is in)`, and the line. */
const where = (file: string, source: ts.SourceFile, node: ts.Node): { readonly at: string; readonly line: number } => {
  const enclosing = ts.findAncestor(node, (n) => (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name)) || ts.isFunctionDeclaration(n))
  const name = enclosing !== undefined && (ts.isVariableDeclaration(enclosing) || ts.isFunctionDeclaration(enclosing)) ? enclosing.name?.getText(source) : undefined
  return { at: `${file} (${name ?? '?'})`, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 }
}

describe('one write path', () => {
  const files = sources()

  it('the metadata keys are read from the codec', () => {
    expect(REQUIRED_KEYS).toEqual(['correlationId', 'causationId', 'recordedAt', 'source'])
  })

  it('event metadata is built in one place in src/: toAppend in src/application/streams.ts', () => {
    const built = files.flatMap(({ file, source }) => nodesOf(source).filter(ts.isObjectLiteralExpression).filter(buildsMetadata).map((o) => where(file, source, o)))
    expect(built.filter((b) => b.at !== ENCODING).map((b) => b.at)).toEqual([`${WRITE_PATH} (toAppend)`])
    expect(built.filter((b) => b.at === ENCODING)).toHaveLength(1)
  })

  it('nothing else in src/ turns an event into one to append (toEventToAppend, toStoreMetadata)', () => {
    const uses = files
      .filter(({ file }) => file !== SCHEMA && file !== 'src/domain/events/registry.ts' && file !== 'src/domain/events/index.ts')
      .flatMap(({ file, source }) =>
        nodesOf(source)
          .filter(ts.isIdentifier)
          .filter((id) => id.text === 'toEventToAppend' || id.text === 'toStoreMetadata')
          .filter((id) => !ts.isImportSpecifier(id.parent))
          .map((id) => where(file, source, id)),
      )
    expect(new Set(uses.map((u) => u.at))).toEqual(new Set([`${WRITE_PATH} (toAppend)`]))
  })

  it('the application appends only through the write path and the command handler', () => {
    const appending = files
      .filter(({ file }) => file.startsWith('src/application/') || file.startsWith('src/jobs/') || file.startsWith('src/cli/') || file.startsWith('src/roles/'))
      .flatMap(({ file, source }) =>
        nodesOf(source)
          .filter(ts.isCallExpression)
          .filter((c) => ts.isPropertyAccessExpression(c.expression) && c.expression.name.text === 'append' && /store/i.test(c.expression.expression.getText(source)))
          .map(() => file),
      )
    expect([...new Set(appending)].sort()).toEqual(['src/application/command-handler.ts', WRITE_PATH])
  })

  it('the guard sees a hand-built metadata object', () => {
    const source = ts.createSourceFile('x.ts', "const m = { correlationId: id, causationId: id, recordedAt: at, source: 'operator' }", ts.ScriptTarget.Latest, true)
    const cause = ts.createSourceFile('y.ts', 'const c = { correlationId: id, causationId: id }', ts.ScriptTarget.Latest, true)
    expect(nodesOf(source).filter(ts.isObjectLiteralExpression).filter(buildsMetadata)).toHaveLength(1)
    expect(nodesOf(cause).filter(ts.isObjectLiteralExpression).filter(buildsMetadata)).toHaveLength(0)
  })
})
