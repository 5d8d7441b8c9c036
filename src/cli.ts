import { Command, CommanderError, Help } from 'commander'
import pkg from '../package.json' with { type: 'json' }
import { COMMAND_LIST, type ListedCommand } from './cli/command-list.ts'
import { EXIT, UsageError } from './cli/io.ts'

/** What registers one group of commands on the program. */
type Register = (program: Command, setExitCode: (code: number) => void) => void

/**
 * The commands, by their top-level names, and the module that defines them, loaded only when one of its
 * commands runs: `satang report reconciliation` loads src/cli/report.ts and what it needs, not the
 * whole program (`satang --help` loads none of them: src/cli/command-list.ts lists them).
 */
const GROUPS: ReadonlyArray<{ readonly names: ReadonlyArray<string>; readonly load: () => Promise<Register> }> = [
  { names: ['up', 'migrate'], load: async () => (await import('./cli/up.ts')).registerUpCommands },
  { names: ['signature'], load: async () => (await import('./cli/signature.ts')).registerSignatureCommands },
  { names: ['sandbox'], load: async () => (await import('./cli/sandbox.ts')).registerSandboxCommand },
  { names: ['project'], load: async () => (await import('./cli/project.ts')).registerProjectCommand },
  { names: ['reconcile'], load: async () => (await import('./cli/reconcile.ts')).registerReconcileCommand },
  { names: ['report'], load: async () => (await import('./cli/report.ts')).registerReportCommand },
  { names: ['ledger'], load: async () => (await import('./cli/ledger.ts')).registerLedgerCommand },
  { names: ['audit'], load: async () => (await import('./cli/audit.ts')).registerAuditCommand },
  { names: ['relay'], load: async () => (await import('./cli/relay.ts')).registerRelayCommand },
  { names: ['users'], load: async () => (await import('./cli/users.ts')).registerUsersCommand },
]

const newProgram = (): Command =>
  new Command('satang')
    .description('satang: an event-sourced payment ledger and reconciliation engine for Thai baht gateway merchants')
    .version(pkg.version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    // An option after a subcommand is that subcommand's (`satang reconcile ack … --json`).
    .enablePositionalOptions()
    .exitOverride()

/**
 * Builds the `satang` command tree: every command (`only` absent), or only the group of the command
 * named `only` with the others listed (as in `satang --help`) but not loaded.
 */
export const buildProgram = async (setExitCode: (code: number) => void, only?: string): Promise<Command> => {
  const program = newProgram()
  const listed = new Map<Command, string>()
  for (const group of GROUPS) {
    if (only === undefined || group.names.includes(only)) (await group.load())(program, setExitCode)
    else for (const name of group.names) listCommand(program, COMMAND_LIST.find((c) => c.name === name), listed)
  }
  listNestedCommands(program, listed)
  return program
}

/** A command shown in help as listed (src/cli/command-list.ts), without loading its module. */
const listCommand = (parent: Command, entry: ListedCommand | undefined, listed: Map<Command, string>): void => {
  if (entry === undefined) return
  const cmd = parent.command(entry.name).description(entry.description)
  listed.set(cmd, entry.term)
  for (const sub of entry.commands ?? []) listCommand(cmd, sub, listed)
}

/**
 * `satang --help` lists the commands nested one level down too (`audit verify`, `report ledger`,
 * `signature verify`, …), under their full name: commander alone shows them only in the parent's help.
 * Set after the commands are added, so their own help is commander's default.
 */
const listNestedCommands = (program: Command, listed: ReadonlyMap<Command, string>): void => {
  const base = new Help()
  const nested = (cmd: Command): ReadonlyArray<Command> => base.visibleCommands(cmd).filter((sub) => sub.parent === cmd && sub.name() !== 'help')
  const termOf = (cmd: Command): string => listed.get(cmd) ?? base.subcommandTerm(cmd)
  program.configureHelp({
    visibleCommands: (cmd) => base.visibleCommands(cmd).flatMap((c) => (cmd === program && c.parent === program ? [c, ...nested(c)] : [c])),
    subcommandTerm: (cmd) => {
      const parent = cmd.parent
      return parent !== null && parent !== program && parent.parent === program ? `${parent.name()} ${termOf(cmd)}` : termOf(cmd)
    },
  })
}

/** The command a command line runs (`satang help report` runs `report`'s help), or undefined (`satang --help`, `satang`). */
const commandNameOf = (args: ReadonlyArray<string>): string | undefined => {
  const first = args[0]
  if (first === undefined || first.startsWith('-')) return undefined
  if (first === 'help') return args[1]
  return first
}

/** The CLI entry point: parses `argv`, runs the command, and sets the exit code. */
export const main = async (argv: ReadonlyArray<string>): Promise<void> => {
  let exitCode: number = EXIT.ok
  const program = await buildProgram((code) => {
    exitCode = code
    // set at once too: a library's exit hook may end the process before main returns
    process.exitCode = code
  }, commandNameOf(argv.slice(2)) ?? '')
  program.commands.forEach(function propagate(cmd: Command): void {
    cmd.exitOverride()
    cmd.commands.forEach(propagate)
  })
  try {
    await program.parseAsync([...argv])
  } catch (e) {
    if (e instanceof CommanderError) {
      // help and version are "errors" to commander; their exit code is 0
      exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.usage
    } else if (e instanceof UsageError) {
      process.stderr.write(`satang: ${e.message}\n`)
      exitCode = EXIT.usage
    } else throw e
  }
  process.exitCode = exitCode
}
