/**
 * The `tokenload` command line. Every error ends in {@link exitCodeFor}: 0 a completed run, 1 a bad
 * input file or an unusable environment (unreachable server, tokenizer, artifact folder), 2 a usage
 * or configuration error, 130 interrupted, 70 an internal error (a bug: stack and a request to report).
 */
import { Command } from 'commander';
import { packageVersion } from '../util/package-root.js';
import { registerAnalyzeCommands } from './analyze-action.js';
import { registerCalibrateCommand } from './calibrate-action.js';
import { exitCodeFor, ignoreClosedOutput } from './cli-io.js';
import { registerMergeCommand } from './merge-action.js';
import { registerProbeCommand } from './probe-action.js';
import { registerProfileCommand } from './profile-action.js';
import { mapProfileArgs } from './profile-command.js';
import { registerReportCommands } from './report-action.js';
import { registerSearchCommand } from './search-action.js';
import { registerSimulateCommand } from './simulate-action.js';

/** The `tokenload` program of {@link createProgram}, and its `profile` command. */
export interface TokenloadProgram {
  /** The top-level command with every command registered. */
  program: Command;
  /** `tokenload profile`, whose arguments go through `mapProfileArgs` before commander parses them. */
  profile: Command;
  /** `tokenload search`, whose arguments are mapped as `profile`'s. */
  search: Command;
}

/**
 * The `tokenload` command line with every command and option registered, as `main` runs it (and as
 * `npm run docs:flags` documents it). `setExit` receives a command's exit code; `args` are the
 * arguments as typed after `tokenload` (recorded, secrets redacted, as a run's command line).
 */
export function createProgram(setExit: (code: number) => void, args: readonly string[]): TokenloadProgram {
  const program = new Command('tokenload')
    .description(
      'Benchmark LLM inference servers: trace replay on a fixed schedule, AIPerf-compatible metrics.',
    )
    .version(packageVersion())
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  const profile = registerProfileCommand(program, setExit, args);
  const search = registerSearchCommand(program, setExit, args);
  registerSimulateCommand(program, setExit);
  registerReportCommands(program, setExit);
  registerAnalyzeCommands(program, setExit);
  registerCalibrateCommand(program, setExit);
  registerProbeCommand(program, setExit);
  registerMergeCommand(program, setExit, args);
  return { program, profile, search };
}

/**
 * Runs the CLI with `argv` (as `process.argv`) and returns the process exit code. Never throws and
 * never calls `process.exit` itself.
 */
export async function main(argv: string[]): Promise<number> {
  ignoreClosedOutput();
  let exitCode = 0;
  const { program, profile, search } = createProgram((code) => {
    exitCode = code;
  }, argv.slice(2));
  try {
    // AIPerf's option names are mapped (or refused, with the reason) before commander sees them.
    const mapped = argv[2] === 'profile' ? profile : argv[2] === 'search' ? search : null;
    const args = mapped === null ? argv : [...argv.slice(0, 3), ...mapProfileArgs(mapped, argv.slice(3))];
    await program.parseAsync(args);
  } catch (err) {
    return exitCodeFor(err, (text) => process.stderr.write(text));
  }
  return exitCode;
}
