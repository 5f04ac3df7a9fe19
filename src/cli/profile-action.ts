/**
 * Wires `tokenload profile` to {@link runProfile}: parses flags (and `-f` config files), installs
 * Ctrl-C / SIGTERM handling (first: stop issuing and drain for the grace period; second: cancel
 * in-flight now), prints the console report, runs sweeps one value after another, and maps
 * failures to exit codes.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { SyntheticOptionError } from '../dataset/synthetic-options.js';
import { DatasetError } from '../dataset/types.js';
import { GoodputParseError } from '../metrics/goodput.js';
import { PromptSynthesisError } from '../prompt/synthesizer.js';
import { TokenizerLoadError } from '../prompt/tokenizer.js';
import type { ProfileConfig } from '../run/config.js';
import { ServerUnreachableError } from '../run/preflight.js';
import { runProfile } from '../run/profile.js';
import type { Logger } from '../run/progress.js';
import { writeSweepSummary } from '../run/sweep.js';
import { ScheduleError } from '../timing/fixed-schedule.js';
import { rateWarning, readCalibration } from './calibrate-action.js';
import { defineProfileOptions, resolveProfileConfigs } from './profile-command.js';

/** Logger on stderr, so stdout carries only the report. */
export const stderrLogger: Logger = {
  info: (m) => process.stderr.write(`[tokenload] ${m}\n`),
  warn: (m) => process.stderr.write(`[tokenload] warning: ${m}\n`),
};

/** Errors that are the user's input, reported as one line with exit code 1 (no stack trace). */
function isInputError(err: unknown): err is Error {
  return (
    err instanceof DatasetError ||
    err instanceof TokenizerLoadError ||
    err instanceof ScheduleError ||
    err instanceof GoodputParseError ||
    err instanceof PromptSynthesisError ||
    err instanceof ServerUnreachableError ||
    err instanceof SyntheticOptionError ||
    err instanceof RangeError
  );
}

/** Registers `profile` on `program`; `setExit` receives the exit code. */
export function registerProfileCommand(program: Command, setExit: (code: number) => void): void {
  const cmd = program
    .command('profile')
    .description('Profile an OpenAI-compatible server (AIPerf-compatible flags).');
  const flags = defineProfileOptions(cmd);
  cmd.action(async () => {
    const configs = resolveProfileConfigs(cmd, flags, ['tokenload', ...process.argv.slice(2)].join(' '));
    setExit(await runAll(configs));
  });
}

async function runAll(configs: ProfileConfig[]): Promise<number> {
  const stop = new AbortController();
  const force = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals === 1) {
      stderrLogger.warn(`${sig}: stopping; press Ctrl-C again to cancel in-flight requests`);
      stop.abort();
    } else if (signals === 2) {
      stderrLogger.warn(
        `${sig}: cancelling in-flight requests; exports follow (a third Ctrl-C exits at once)`,
      );
      force.abort();
      // Something that cannot be interrupted (e.g. a hung file system call) must not hold the user.
      setTimeout(() => process.exit(130), 10_000).unref();
    } else {
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const outcomes = [];
    for (const config of configs) {
      if (stop.signal.aborted) break;
      if (config.requestRate !== undefined) {
        const warning = rateWarning(await readCalibration(), config.requestRate);
        if (warning !== null) stderrLogger.warn(warning);
      }
      const outcome = await runProfile(config, {
        log: stderrLogger,
        stopSignal: stop.signal,
        forceSignal: force.signal,
      });
      process.stdout.write(`${outcome.consoleText}\n`);
      outcomes.push({ config, outcome });
      if (outcome.inputError !== null) {
        process.stderr.write(`error: ${outcome.inputError.message}\n`);
        return 1;
      }
    }
    if (configs.length > 1) process.stdout.write(`${await writeSweepSummary(outcomes)}\n`);
    return stop.signal.aborted ? 130 : 0;
  } catch (err) {
    if (isInputError(err)) {
      process.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
