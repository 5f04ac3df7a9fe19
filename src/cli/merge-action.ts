/**
 * `tokenload merge SHARD_DIR... --artifact-dir OUT [--allow-partial]`: the shards of a sharded run
 * merged into one run's artifacts (src/merge). Its flags come from {@link MergeOptionsSchema}.
 * Exit codes: 0 merged (with `--allow-partial`, also when shards are missing or did not complete:
 * `run_status` says `partial`), 1 a folder that is not a tokenload run, a malformed record line, or
 * shards that do not make one whole run (nothing written), 2 a usage error, 3 merged but no request
 * of any shard succeeded.
 */
import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import { mergeShards } from '../merge/merge-run.js';
import { MergeOptionsSchema } from '../merge/options.js';
import { optionFields, parseOptions } from '../util/option-meta.js';
import { type CliIo, guarded, PROCESS_IO } from './cli-io.js';
import { addSchemaOptions } from './schema-options.js';

/**
 * Registers `merge` on `program`; `setExit` receives the exit code; `io` receives the console
 * report (stdout) and errors (stderr). `argv` is the process's, for the console's `CLI Command`.
 */
export function registerMergeCommand(
  program: Command,
  setExit: (code: number) => void,
  argv: readonly string[],
  io: CliIo = PROCESS_IO,
): void {
  const cmd = program
    .command('merge')
    .description(
      'Merge the artifact folders of a sharded run (--shard-index/--shard-count) into one run: every metric recomputed from all records.',
    )
    .argument('<shard-dirs...>', 'artifact folders of the shards, one per index');
  const flags = addSchemaOptions(cmd, optionFields(MergeOptionsSchema));
  cmd.action(async (shardDirs: string[]) => {
    let runCode = 0;
    const code = await guarded(io, async () => {
      const input = { ...flags.read(cmd), shardDirs, commandLine: ['tokenload', ...argv].join(' ') };
      const outcome = await mergeShards(
        parseOptions(MergeOptionsSchema, input, (m, o) => new ConfigError(m, o)),
      );
      io.out(outcome.consoleText);
      // A merge in which no request succeeded is written, and says so on stderr too, as a run does.
      runCode = outcome.status.exit_code;
      if (runCode !== 0) io.err(`error: ${outcome.status.reason}\n`);
    });
    setExit(code !== 0 ? code : runCode);
  });
}
