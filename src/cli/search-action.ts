/**
 * Wires `tokenload search` to {@link runSearch}: every `profile` option plus the search's own
 * (src/search/config.ts), Ctrl-C handling (first: stop the probe through profile's own stop path and
 * write the history, exit 130; second: cancel in-flight requests), the probe table row by row, the
 * answer, and the exit code: 0 an answer, 5 ({@link EXIT_SEARCH_CLIENT_LIMITED}) a client-limited
 * probe stopped the search, 130 interrupted, 2 a bad flag before anything was sent.
 */
import type { Command } from 'commander';
import { EXIT_INTERRUPTED, EXIT_SEARCH_CLIENT_LIMITED } from '../errors.js';
import { writeSearchReport } from '../report/search-html.js';
import { SEARCH_FIELDS, type SearchFlags } from '../search/config.js';
import { answerText, tableHeader, tableRow } from '../search/console.js';
import { runSearch } from '../search/search.js';
import { exitCodeFor } from './cli-io.js';
import { stderrLogger } from './profile-action.js';
import { defineProfileOptions, recordedCommandLine, resolveProfileInput } from './profile-command.js';
import { addSchemaOptions } from './schema-options.js';
import { listenForStop } from './stop-signals.js';

/**
 * Registers `search` on `program`; `setExit` receives the exit code; `args` are the arguments as
 * typed after `tokenload` (recorded, secrets redacted). Returns the command, whose arguments go
 * through `mapProfileArgs` (AIPerf's names) before commander parses them.
 */
export function registerSearchCommand(
  program: Command,
  setExit: (code: number) => void,
  args: readonly string[],
): Command {
  const cmd = program
    .command('search')
    .description(
      'Find the largest request rate, concurrency or trace-replay speedup that meets the SLOs (every profile option, plus the search options; docs/search.md).',
    );
  const searchFlags = addSchemaOptions(cmd, SEARCH_FIELDS, {}, () => 'Search:');
  const flags = defineProfileOptions(cmd);
  cmd.action(async () => {
    const profile = resolveProfileInput(cmd, flags, args, {
      onDetected: (d) =>
        stderrLogger.info(`dataset type ${d.type} (detected; --custom-dataset-type not given): ${d.reason}`),
      onNote: (line) => stderrLogger.info(line),
    });
    setExit(
      await searchWithSignals(searchFlags.read(cmd) as SearchFlags, profile, recordedCommandLine(args)),
    );
  });
  return cmd;
}

async function searchWithSignals(
  search: SearchFlags,
  profile: Parameters<typeof runSearch>[0]['profile'],
  commandLine: string,
): Promise<number> {
  const signals = listenForStop(
    stderrLogger,
    'stopping the probe and the search (the history is kept; --resume continues it)',
  );
  const started = Date.now();
  let headed = false;
  try {
    const result = await runSearch({
      search,
      profile,
      commandLine,
      log: stderrLogger,
      stopSignal: signals.stop,
      forceSignal: signals.force,
      onProbe: (it, history) => {
        if (!headed) process.stdout.write(`${tableHeader(history.config.sla_filters)}\n`);
        headed = true;
        process.stdout.write(`${tableRow(history, it)}\n`);
      },
    });
    process.stdout.write(`${answerText(result.history, (Date.now() - started) / 1000)}\n`);
    await writeReport(result.searchDir);
    if (result.ending === 'input_error')
      return exitCodeFor(result.inputError, (t) => process.stderr.write(t));
    if (result.ending === 'interrupted') return EXIT_INTERRUPTED;
    if (result.ending === 'client_limited') {
      process.stderr.write(`error: ${result.history.client_limit?.message ?? 'client-limited'}\n`);
      return EXIT_SEARCH_CLIENT_LIMITED;
    }
    return 0;
  } finally {
    signals.dispose();
  }
}

/** The search's report.html, whatever the ending (an interrupted search's says it is incomplete); a failure to write it is a warning. */
async function writeReport(dir: string): Promise<void> {
  try {
    process.stdout.write(`Report: ${await writeSearchReport(dir)}\n`);
  } catch (err) {
    stderrLogger.warn(`the search report could not be written: ${(err as Error).message}`);
  }
}
