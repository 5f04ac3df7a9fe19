/**
 * The runs of one `tokenload profile` command (config/sweep.ts `planRunSet`): one after another,
 * each in its folder, with `--profile-run-cooldown-seconds` between them, then the aggregates of a
 * multi-run (`aggregate/`, ./aggregate.ts) and of a sweep (`sweep_aggregate/`, ./sweep.ts).
 */
import { join } from 'node:path';
import type { PlannedRun, RunSetPlan } from '../config/sweep.js';
import type { RunEnv } from '../util/run-env.js';
import { confidenceTable, type FinishedRun, writeConfidenceAggregate } from './aggregate.js';
import { claimArtifactDir } from './artifacts.js';
import type { RunOutcome } from './finish.js';
import { runProfile } from './profile.js';
import { SWEEP_AGGREGATE_DIR_NAME, writeSweepAggregate } from './sweep.js';

/** A run of the set and how it ended. */
export interface RunSetResult {
  run: PlannedRun;
  outcome: RunOutcome;
}

/** What the caller does around each run (the CLI: its calibration warning, the console, the exit code). */
export interface RunSetHooks {
  /** Before a run starts. */
  before?: (run: PlannedRun) => Promise<void>;
  /** After a run: return false to stop the set (e.g. a bad input file). */
  after: (result: RunSetResult) => boolean;
}

/**
 * Runs every run of `plan` in order (stopping when `env.stopSignal` aborts or `hooks.after` says
 * so); the first run of several claims the set's folder once its inputs are checked.
 * @returns the finished runs.
 * @throws whatever {@link runProfile} throws.
 */
export async function runSet(plan: RunSetPlan, env: RunEnv, hooks: RunSetHooks): Promise<RunSetResult[]> {
  const results: RunSetResult[] = [];
  for (const [i, run] of plan.runs.entries()) {
    if (env.stopSignal.aborted) break;
    const pause = cooldownBefore(plan, i);
    if (pause > 0) {
      env.log.info(`cooldown: ${pause} s before ${run.labels.runLabel} ${run.labels.variationLabel}`);
      await sleep(pause * 1000, env.stopSignal);
      if (env.stopSignal.aborted) break;
    }
    await hooks.before?.(run);
    const outcome = await runProfile(run.config, {
      ...env,
      ...(plan.runs.length > 1 ? { runLabels: run.labels } : {}),
      ...(i === 0 && plan.runs.length > 1
        ? { beforeClaim: () => claimArtifactDir(plan.baseDir, env.log) }
        : {}),
    });
    results.push({ run, outcome });
    if (!hooks.after({ run, outcome })) break;
  }
  return results;
}

/**
 * The pause before run `i`: `--profile-run-cooldown-seconds` when it starts a new trial,
 * `--parameter-sweep-cooldown-seconds` before the next value of the same trial (AIPerf's rule).
 */
function cooldownBefore(plan: RunSetPlan, i: number): number {
  const previous = plan.runs[i - 1];
  const run = plan.runs[i];
  if (previous === undefined || run === undefined) return 0;
  return previous.labels.trial !== run.labels.trial ? plan.cooldownSeconds : plan.sweepCooldownSeconds;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Writes the aggregates of a finished set: with `--num-profile-runs` > 1, `aggregate/` (a sweep:
 * per value, `aggregate/<value>/`, or `<value>/aggregate/` in the `independent` mode); with a sweep,
 * `sweep_aggregate/` (`aggregate/sweep_aggregate/` with several runs per value in the `repeated`
 * mode). Returns the console text (the sweep table; where the aggregates are).
 * @throws the file system error of a failed write.
 */
export async function writeSetAggregates(
  plan: RunSetPlan,
  results: readonly RunSetResult[],
): Promise<string> {
  const aggregateDir = join(plan.baseDir, 'aggregate');
  if (plan.sweep === null) {
    if (plan.trials === 1) return '';
    const { path, metrics } = await writeConfidenceAggregate(
      aggregateDir,
      finished(results),
      plan.confidenceLevel,
    );
    return confidenceTable(
      metrics,
      plan.confidenceLevel,
      `tokenload | Across ${results.length} runs (${path})`,
    );
  }
  const independent = plan.mode === 'independent';
  const byValue = plan.sweep.values.map((_, i) => results.filter((r) => r.run.labels.variationIndex === i));
  const lines: string[] = [];
  for (const [i, rs] of byValue.entries()) {
    const valueDir = rs[0]?.run.valueDir;
    if (plan.trials === 1 || valueDir === undefined || valueDir === null) continue;
    const dir = independent ? join(plan.baseDir, valueDir, 'aggregate') : join(aggregateDir, valueDir);
    const { path } = await writeConfidenceAggregate(dir, finished(rs), plan.confidenceLevel);
    lines.push(`Aggregate of ${plan.sweep.name} ${plan.sweep.values[i]}: ${path}`);
  }
  const nested = plan.trials > 1 && !independent;
  const table = await writeSweepAggregate(
    join(nested ? aggregateDir : plan.baseDir, SWEEP_AGGREGATE_DIR_NAME),
    {
      axis: plan.sweep,
      trials: plan.trials,
      mode: plan.mode,
      confidenceLevel: plan.confidenceLevel,
      byValue: byValue.map((rs) => finished(rs)),
    },
  );
  return [...lines, table].join('\n');
}

/** The runs as the aggregates read them. */
function finished(rs: readonly RunSetResult[]): FinishedRun[] {
  return rs.map((r) => ({ runLabel: r.run.labels.runLabel, outcome: r.outcome }));
}
