/**
 * `tokenload search`'s loop: ask the planner for the next load, run it as a probe
 * (./probe-run.ts), judge it, rewrite `search_history.json`, until the planner is done, the client
 * limits a probe, or the stop signal (Ctrl-C) ends one. A resumed search re-reads its probes from
 * the history and asks the planner again: the planner is a function of the probes alone.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProfileConfigInput } from '../config/fields.js';
import { MULTI_RUN_DEFAULT_SEED } from '../config/sweep.js';
import { ConfigError } from '../errors.js';
import { createArtifactDir } from '../run/artifacts.js';
import { packageVersion } from '../util/package-root.js';
import type { RunEnv } from '../util/run-env.js';
import type { SearchSpec } from './config.js';
import { SWEPT_DIM_PATH } from './config.js';
import { clientLimitOf, historyConfig, plannerConfig, pointOf } from './history-build.js';
import { historyPath, readHistory, writeHistory } from './history-file.js';
import type { HistoryConfig, HistoryIteration, SearchHistory } from './history-types.js';
import { currentBoundary, nextStep } from './planner.js';
import { runProbe } from './probe-run.js';

/** What {@link runSearchLoop} needs. */
export interface SearchRunOptions {
  spec: SearchSpec;
  /** Every probe's profile input, the searched field and `--num-profile-runs` unset (a resolved `profile` input). */
  profile: ProfileConfigInput;
  /** The search folder (the run's `--artifact-dir`, or `--resume`'s). */
  searchDir: string;
  /** The command line as recorded (secrets redacted). */
  commandLine: string;
  /** Hears each finished probe (the console table), and the history as written after it. */
  onProbe?: (iteration: HistoryIteration, history: SearchHistory) => void;
}

/** How a search ended. */
export interface SearchResult {
  history: SearchHistory;
  /** `done` (the planner's answer), `client_limited`, `interrupted` (Ctrl-C), `input_error`. */
  ending: 'done' | 'client_limited' | 'interrupted' | 'input_error';
  /** The bad-input error that ended a probe's run early (`input_error`); else null. */
  inputError: Error | null;
}

const FOLDER = /^probe-(\d{2,})$/;

/** The next free probe number in `dir` (1 + the largest `probe-NN`). */
function nextFolderNumber(dir: string, iterations: readonly HistoryIteration[]): number {
  const names = existsSync(dir) ? readdirSync(dir) : [];
  const numbers = [...names, ...iterations.map((it) => it.folder)].map((n) =>
    Number(FOLDER.exec(n)?.[1] ?? 0),
  );
  return Math.max(0, ...numbers) + 1;
}

/** The search flags of `now` that differ from the history's `then`, named as flags. */
function differences(now: HistoryConfig, then: HistoryConfig): string[] {
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  const slas = (c: HistoryConfig): unknown =>
    c.sla_filters.map(({ metric_tag, stat, op, threshold }) => [metric_tag, stat, op, threshold]);
  const checks: Array<[string, unknown, unknown]> = [
    ['--search-over', now.search_over, then.search_over],
    ['--search-range', now.range, then.range],
    ['--search-precision', now.precision, then.precision],
    ['--num-profile-runs', now.trials, then.trials],
    ['the SLOs (--search-sla and the shorthands)', slas(now), slas(then)],
    ['--slo-attainment-fraction', now.slo_attainment_fraction, then.slo_attainment_fraction],
    ['--random-seed', now.random_seed, then.random_seed],
  ];
  if (then.profile_sha256 !== undefined && then.profile_sha256 !== now.profile_sha256)
    checks.push([
      'the profile options (model, server, dataset, duration, …)',
      'others',
      'the command recorded in it',
    ]);
  return checks
    .filter(([, a, b]) => !same(a, b))
    .map(([flag, a, b]) => `${flag} (history: ${JSON.stringify(b)}, now: ${JSON.stringify(a)})`);
}

/**
 * The history a search starts from: a new one (the folder created, an earlier search's
 * `probe-NN/` and history removed), or `--resume`'s, checked against the command.
 * @throws {ConfigError} naming `--resume` when its folder has no history or the search flags differ.
 */
export async function startHistory(options: SearchRunOptions): Promise<SearchHistory> {
  const { spec, searchDir } = options;
  if (spec.resumeDir !== null) {
    const old = await readHistory(spec.resumeDir);
    const now = {
      ...historyConfig(spec, searchSeed(options.profile, old.config)),
      profile_sha256: profileSha256(options.profile),
    };
    const diff = differences(now, old.config);
    if (diff.length > 0)
      throw new ConfigError(
        `--resume ${spec.resumeDir}: the search flags differ from its history: ${diff.join('; ')} (the history was made by: ${old.command})`,
        '--resume',
      );
    // A larger --search-max-probes gives a search that ran out of probes more.
    return {
      ...old,
      config: { ...old.config, max_probes: spec.maxProbes },
      resumed_by: [...(old.resumed_by ?? []), options.commandLine],
      convergence_reason: null,
      client_limit: null,
    };
  }
  const config = {
    ...historyConfig(spec, searchSeed(options.profile, null)),
    profile_sha256: profileSha256(options.profile),
  };
  await createArtifactDir(searchDir);
  if (existsSync(historyPath(searchDir)))
    for (const name of readdirSync(searchDir).filter((n) => FOLDER.test(n)))
      await rm(join(searchDir, name), { recursive: true, force: true });
  return {
    schema_version: '1.0',
    tokenload_version: packageVersion(),
    command: options.commandLine,
    config,
    iterations: [],
    boundary_summary: currentBoundary(plannerConfig(spec), []),
    convergence_reason: null,
    client_limit: null,
  };
}

/**
 * SHA-256 of the probes' profile options, keys sorted, without what may differ between a search and
 * its resume (the folder, the UI, the command line, the seed, checked on its own, and the trials, a
 * search option).
 */
export function profileSha256(profile: ProfileConfigInput): string {
  const {
    artifactDir: _dir,
    ui: _ui,
    randomSeed: _seed,
    numProfileRuns: _trials,
    commandLine: _line,
    ...rest
  } = profile;
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v as Record<string, unknown>)
              .filter(([, x]) => x !== undefined)
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, x]) => [k, sorted(x)]),
          )
        : v;
  return createHash('sha256')
    .update(JSON.stringify(sorted(rest)))
    .digest('hex');
}

/** The seed of every probe: `--random-seed`, else the history's (resume), else AIPerf's multi-run seed. */
export function searchSeed(profile: ProfileConfigInput, resumed: HistoryConfig | null): number {
  return profile.randomSeed ?? resumed?.random_seed ?? MULTI_RUN_DEFAULT_SEED;
}

/**
 * Runs the search of `options` from `history` (see the module comment); writes the history after
 * every probe and at the end.
 * @throws what a probe's {@link runProbe} throws before it measured anything (the history written first).
 */
export async function runSearchLoop(
  options: SearchRunOptions,
  history: SearchHistory,
  env: RunEnv,
): Promise<SearchResult> {
  const { spec, searchDir } = options;
  const pc = plannerConfig(spec);
  const swept = SWEPT_DIM_PATH[spec.searchOver];
  await writeHistory(searchDir, history);
  let probesRun = 0;
  for (;;) {
    const points = history.iterations.map(pointOf);
    const step = nextStep(pc, points);
    const last = history.iterations.at(-1);
    if (last?.status === 'client_limited') {
      history.convergence_reason = 'client_limited';
      history.boundary_summary = step.kind === 'done' ? step.boundary : currentBoundary(pc, points);
      history.client_limit = clientLimitOf(last, spec, workersAsNumber(options.profile.workers));
      await writeHistory(searchDir, history);
      return { history, ending: 'client_limited', inputError: null };
    }
    if (step.kind === 'done') {
      history.convergence_reason = step.reason;
      history.boundary_summary = step.boundary;
      await writeHistory(searchDir, history);
      return { history, ending: 'done', inputError: null };
    }
    if (env.stopSignal.aborted) return { history, ending: 'interrupted', inputError: null };
    const trial = history.iterations.filter((it) => it.load === step.load).length + 1;
    const at = {
      iterationIdx: history.iterations.length,
      folderNumber: nextFolderNumber(searchDir, history.iterations),
      load: step.load,
      trial,
      phase: step.phase,
      seed: history.config.random_seed,
      warm: probesRun > 0,
    };
    probesRun++;
    env.log.info(
      `probe ${at.folderNumber}: ${swept} ${step.load} (${step.phase}${trial > 1 ? `, trial ${trial}` : ''})`,
    );
    let result: Awaited<ReturnType<typeof runProbe>>;
    try {
      result = await runProbe(options.profile, spec, searchDir, at, env);
    } catch (err) {
      await writeHistory(searchDir, history);
      throw err;
    }
    history.iterations.push(result.iteration);
    history.boundary_summary = currentBoundary(pc, history.iterations.map(pointOf));
    await writeHistory(searchDir, history);
    options.onProbe?.(result.iteration, history);
    if (result.inputError !== null) return { history, ending: 'input_error', inputError: result.inputError };
    if (result.iteration.status === 'interrupted')
      return { history, ending: 'interrupted', inputError: null };
  }
}

/** `--workers` as a count for the search's suggestion: `auto` (decided per probe) counts as 1. */
function workersAsNumber(workers: number | 'auto' | undefined): number {
  return typeof workers === 'number' ? workers : 1;
}
