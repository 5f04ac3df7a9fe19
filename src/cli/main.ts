/**
 * The `tokenload` command line. Every error ends in {@link exitCodeFor}: 0 a completed run, 1 a bad
 * input file or an unusable environment (unreachable server, tokenizer, artifact folder), 2 a usage
 * or configuration error, 130 interrupted, 70 an internal error (a bug: stack and a request to report).
 */
import { Command } from 'commander';
import { packageVersion } from '../util/package-root.js';
import { registerAnalyzeCommands } from './analyze-action.js';
import { registerCalibrateCommand } from './calibrate-action.js';
import { exitCodeFor } from './cli-io.js';
import { registerMergeCommand } from './merge-action.js';
import { registerProbeCommand } from './probe-action.js';
import { registerProfileCommand } from './profile-action.js';
import { mapProfileArgs } from './profile-command.js';
import { registerReportCommands } from './report-action.js';
import { registerSimulateCommand } from './simulate-action.js';

/**
 * Runs the CLI with `argv` (as `process.argv`) and returns the process exit code. Never throws and
 * never calls `process.exit` itself.
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
  const profile = registerProfileCommand(program, setExit, argv.slice(2));
  registerSimulateCommand(program, setExit);
  registerReportCommands(program, setExit);
  registerAnalyzeCommands(program, setExit);
  registerCalibrateCommand(program, setExit);
  registerProbeCommand(program, setExit);
  registerMergeCommand(program, setExit, argv.slice(2));
  try {
    // AIPerf's option names are mapped (or refused, with the reason) before commander sees them.
    const args =
      argv[2] === 'profile' ? [...argv.slice(0, 3), ...mapProfileArgs(profile, argv.slice(3))] : argv;
    await program.parseAsync(args);
  } catch (err) {
    return exitCodeFor(err, (text) => process.stderr.write(text));
  }
  return exitCode;
}
