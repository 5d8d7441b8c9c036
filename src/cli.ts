import { Command, CommanderError, Help } from 'commander'
import pkg from '../package.json' with { type: 'json' }
import { registerAuditCommand } from './cli/audit.ts'
import { EXIT, UsageError } from './cli/io.ts'
import { registerLedgerCommand } from './cli/ledger.ts'
import { registerProjectCommand } from './cli/project.ts'
import { registerRelayCommand } from './cli/relay.ts'
import { registerReconcileCommand } from './cli/reconcile.ts'
import { registerReportCommand } from './cli/report.ts'
import { registerSandboxCommand } from './cli/sandbox.ts'
import { registerSignatureCommands } from './cli/signature.ts'
import { registerUpCommands } from './cli/up.ts'
import { registerUsersCommand } from './cli/users.ts'

/** Builds the `satang` command tree. Commands register themselves from `src/cli/`. */
export const buildProgram = (setExitCode: (code: number) => void): Command => {
  const program = new Command('satang')
    .description('satang: an event-sourced payment ledger and reconciliation engine for Thai baht gateway merchants')
    .version(pkg.version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    // An option after a subcommand is that subcommand's (`satang reconcile ack … --json`).
    .enablePositionalOptions()
    .exitOverride()
  registerUpCommands(program, setExitCode)
  registerSignatureCommands(program, setExitCode)
  registerSandboxCommand(program, setExitCode)
  registerProjectCommand(program, setExitCode)
  registerReconcileCommand(program, setExitCode)
  registerReportCommand(program, setExitCode)
  registerLedgerCommand(program, setExitCode)
  registerAuditCommand(program, setExitCode)
  registerRelayCommand(program, setExitCode)
  registerUsersCommand(program, setExitCode)
  listNestedCommands(program)
  return program
}

/**
 * `satang --help` lists the commands nested one level down too (`audit verify`, `report ledger`,
 * `signature verify`, …), under their full name: commander alone shows them only in the parent's help.
 * Set after the commands are added, so their own help is commander's default.
 */
const listNestedCommands = (program: Command): void => {
  const base = new Help()
  const nested = (cmd: Command): ReadonlyArray<Command> => base.visibleCommands(cmd).filter((sub) => sub.parent === cmd && sub.name() !== 'help')
  program.configureHelp({
    visibleCommands: (cmd) => base.visibleCommands(cmd).flatMap((c) => (cmd === program && c.parent === program ? [c, ...nested(c)] : [c])),
    subcommandTerm: (cmd) => {
      const parent = cmd.parent
      return parent !== null && parent !== program && parent.parent === program ? `${parent.name()} ${base.subcommandTerm(cmd)}` : base.subcommandTerm(cmd)
    },
  })
}

/** The CLI entry point: parses `argv`, runs the command, and sets the exit code. */
export const main = async (argv: ReadonlyArray<string>): Promise<void> => {
  let exitCode: number = EXIT.ok
  const program = buildProgram((code) => {
    exitCode = code
    // set at once too: a library's exit hook may end the process before main returns
    process.exitCode = code
  })
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
