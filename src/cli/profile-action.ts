/**
 * Wires `tokenload profile` to {@link runProfile}: parses flags (and `-f` config files), installs
 * Ctrl-C / SIGTERM handling (first: stop issuing and drain for the grace period; second: cancel
 * in-flight now), prints the console report, runs sweeps one value after another, and maps
 * failures to exit codes (a run where no request succeeded: {@link EXIT_NO_SUCCESS}; one that
 * --failed-request-threshold stopped: {@link EXIT_FAILED_REQUEST_THRESHOLD}).
 */
import type { Command } from 'commander';
import type { RunSetPlan } from '../config/sweep.js';
import { EXIT_FAILED_REQUEST_THRESHOLD, EXIT_INTERRUPTED, EXIT_NO_SUCCESS } from '../errors.js';
import { rateWarning, readCalibration } from '../health/calibration-file.js';
import { runSet, writeSetAggregates } from '../run/run-set.js';
import type { Logger } from '../util/run-env.js';
import { exitCodeFor } from './cli-io.js';
import { defineProfileOptions, resolveProfilePlan } from './profile-command.js';
import { listenForStop } from './stop-signals.js';

/** Logger on stderr, so stdout carries only the report. */
export const stderrLogger: Logger = {
  info: (m) => process.stderr.write(`[tokenload] ${m}\n`),
  warn: (m) => process.stderr.write(`[tokenload] warning: ${m}\n`),
};

/**
 * Registers `profile` on `program`; `setExit` receives the exit code; `args` are the arguments as
 * typed after `tokenload` (recorded, secrets redacted, as the run's command line). Returns the
 * command, whose arguments go through `mapProfileArgs` (profile-command.ts) before commander parses them.
 */
export function registerProfileCommand(
  program: Command,
  setExit: (code: number) => void,
  args: readonly string[],
): Command {
  const cmd = program
    .command('profile')
    .description('Profile an OpenAI-compatible server (AIPerf-compatible flags).');
  const flags = defineProfileOptions(cmd);
  cmd.action(async () => {
    const plan = resolveProfilePlan(cmd, flags, args, {
      onDetected: (d) =>
        stderrLogger.info(`dataset type ${d.type} (detected; --custom-dataset-type not given): ${d.reason}`),
      onNote: (line) => stderrLogger.info(line),
    });
    setExit(await runAll(plan));
  });
  return cmd;
}

async function runAll(plan: RunSetPlan): Promise<number> {
  const signals = listenForStop(stderrLogger, 'stopping');
  try {
    let failedCode = 0;
    let inputCode: number | null = null;
    const results = await runSet(
      plan,
      { log: stderrLogger, stopSignal: signals.stop, forceSignal: signals.force },
      {
        before: async ({ config }) => {
          if (config.requestRate === undefined) return;
          const warning = rateWarning(
            await readCalibration(undefined, stderrLogger.warn),
            config.requestRate,
          );
          if (warning !== null) stderrLogger.warn(warning);
        },
        after: ({ outcome }) => {
          process.stdout.write(`${outcome.consoleText}\n`);
          if (outcome.inputError !== null) {
            inputCode = exitCodeFor(outcome.inputError, (t) => process.stderr.write(t));
            return false;
          }
          const code = outcome.status.exit_code;
          if (code === EXIT_NO_SUCCESS || code === EXIT_FAILED_REQUEST_THRESHOLD) {
            process.stderr.write(`error: ${outcome.status.reason}\n`);
            failedCode = code;
          }
          return true;
        },
      },
    );
    if (inputCode !== null) return inputCode;
    if (plan.runs.length > 1 && results.length > 0) {
      const text = await writeSetAggregates(plan, results);
      if (text !== '') process.stdout.write(`${text}\n`);
    }
    // A sweep goes on after a value where nothing succeeded (or too much failed), and exits with that failure at the end.
    return signals.stop.aborted ? EXIT_INTERRUPTED : failedCode;
  } finally {
    signals.dispose();
  }
}
