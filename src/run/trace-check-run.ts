/**
 * The trace check at the start of `tokenload profile` on a trace (analyze/trace-check.ts): run over
 * the whole file (every shard's rows, so uneven shards show) before the first request, its findings
 * logged as warnings and kept for the summary's `trace_check`; never fatal. `--developer-role-as-system`
 * is applied here too.
 */
import { checkDataset, checkTraceFile } from '../analyze/check-trace.js';
import { findingWarning } from '../analyze/trace-check.js';
import type { TraceCheckReport } from '../analyze/trace-check-findings.js';
import type { RunPlan } from '../config/plan.js';
import {
  type DeveloperRewrites,
  rewriteDatasetDeveloperRole,
  rewriteStreamDeveloperRole,
} from '../dataset/developer-role.js';
import type { Dataset, LoadOptions, TraceStream } from '../dataset/types.js';
import type { TextTokenizer } from '../prompt/tokenizer.js';
import type { RunEnv } from '../util/run-env.js';

/** What the check found (null: not run) and the developer-role rewrites (null: not asked). */
export interface TraceCheckNotes {
  report: TraceCheckReport | null;
  developerRewrites: DeveloperRewrites | null;
}

/**
 * Checks the run's trace (the context from `--max-context-length`, else `tokenizer`'s
 * `model_max_length`): `whole` when it was loaded whole (before sharding), else the file read
 * once more with `load` (a streamed replay). Findings are logged as warnings and returned; with
 * `--developer-role-as-system`, the `developer_role` finding is left out (the rewrites are counted).
 * A bad row of a streamed trace refuses the run before anything is sent when the replay would read
 * the whole file; with `--request-count` or `--benchmark-duration` (which may stop it first) it ends
 * the check, not the run, and the replay meets it if it gets there.
 * @throws {DatasetError} naming file, line and field for a bad row of a trace the replay reads whole
 *   (streamed without a count or a duration, or loaded whole: its load threw first anyway).
 */
export async function runTraceCheck(
  config: RunPlan,
  env: RunEnv,
  whole: Dataset | null,
  load: LoadOptions,
  tokenizer: Pick<TextTokenizer, 'modelMaxLength' | 'name'>,
): Promise<{ report: TraceCheckReport | null; warnings: string[] }> {
  const { input } = config;
  if (!config.traceCheck || input.kind !== 'file') return { report: null, warnings: [] };
  const options = { ...contextOf(config, tokenizer), shardCount: config.shardCount };
  // A replay that reads the whole file would stop at a bad row after sending the rows before it:
  // refused now instead. One that may stop first (a count or a duration) is told where it would end.
  const tolerate = config.stop.requestCount !== undefined || config.stop.durationNs !== undefined;
  const checked =
    whole === null
      ? await checkTraceFile(input.file, input.datasetType, load, options, tolerate)
      : checkDataset(whole, options, load.speedupRatio);
  // Asked to send developer messages as system: nothing to warn about (the rewrites are counted).
  const report = config.developerRoleAsSystem
    ? { ...checked, findings: checked.findings.filter((f) => f.check !== 'developer_role') }
    : checked;
  const warnings = report.findings.map(findingWarning);
  for (const w of warnings) env.log.warn(w);
  if (report.readError !== undefined)
    env.log.info(
      `trace check: stopped at a bad row (${report.readError}); its counts cover the ${report.rows} rows before it, and the replay stops there too`,
    );
  else if (report.findings.length === 0) env.log.info(`trace check: ${report.rows} rows, no check fired`);
  return { report, warnings };
}

/**
 * The context the `over_context` check uses: `--max-context-length`, else the run tokenizer's
 * `model_max_length` (tokenizer_config.json), else none (the check is skipped).
 */
function contextOf(
  config: RunPlan,
  tokenizer: Pick<TextTokenizer, 'modelMaxLength' | 'name'>,
): { maxContextLength?: number; contextSource?: string } {
  if (config.maxContextLength !== undefined) return { maxContextLength: config.maxContextLength };
  if (tokenizer.modelMaxLength === undefined) return {};
  return {
    maxContextLength: tokenizer.modelMaxLength,
    contextSource: `model_max_length of tokenizer ${tokenizer.name}`,
  };
}

/**
 * Applies `--developer-role-as-system` to the dataset loaded whole, or to the stream as it is read;
 * null counts without the flag.
 */
export function applyDeveloperRole(
  config: RunPlan,
  dataset: Dataset,
  stream: TraceStream | null,
): { stream: TraceStream | null; rewrites: DeveloperRewrites | null } {
  if (!config.developerRoleAsSystem) return { stream, rewrites: null };
  const rewrites: DeveloperRewrites = { rows: 0 };
  if (stream === null) {
    rewriteDatasetDeveloperRole(dataset, rewrites);
    return { stream, rewrites };
  }
  return { stream: { ...stream, turns: rewriteStreamDeveloperRole(stream.turns, rewrites) }, rewrites };
}

/** The console line of the rewrites: `N rows had developer messages sent as system (--developer-role-as-system)`. */
export function describeRewrites(rewrites: DeveloperRewrites): string {
  return `--developer-role-as-system: ${rewrites.rows} ${rewrites.rows === 1 ? 'row' : 'rows'} had their "developer" messages sent as "system"`;
}
