/**
 * The `tokenload` command line. Exit codes: 0 a completed run, 1 a run that failed to start or a
 * runtime fault, 2 a usage error (unknown flag, bad value), 130 interrupted before any export.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { packageVersion } from '../util/package-root.js';
import { registerAnalyzeCommands } from './analyze-action.js';
import { registerCalibrateCommand } from './calibrate-action.js';
import { expandConfigFile } from './config-file.js';
import { registerProfileCommand } from './profile-action.js';
import { registerReportCommands } from './report-action.js';
import { registerSimulateCommand } from './simulate-action.js';

/** Exit code for usage errors. */
export const EXIT_USAGE = 2;

/**
 * Runs the CLI with `argv` (as `process.argv`) and returns the process exit code. Never calls
 * `process.exit` itself.
 */
export async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const program = new Command('tokenload')
    .description(
      'Benchmark LLM inference servers: trace replay on a fixed schedule, AIPerf-compatible metrics.',
    )
    .version(packageVersion())
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  const setExit = (code: number): void => {
    exitCode = code;
  };
  registerProfileCommand(program, setExit);
  registerSimulateCommand(program, setExit);
  registerReportCommands(program, setExit);
  registerAnalyzeCommands(program, setExit);
  registerCalibrateCommand(program, setExit);
  let args: string[];
  try {
    args = expandConfigFile(argv, 'profile');
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    return EXIT_USAGE;
  }
  try {
    await program.parseAsync(args);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      if (err.code === 'commander.help') return 0;
      return EXIT_USAGE;
    }
    throw err;
  }
  return exitCode;
}
