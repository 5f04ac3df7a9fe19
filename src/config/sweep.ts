/**
 * Sweeps and multi-runs: a `--concurrency` or `--request-rate` list, and `--num-profile-runs N`,
 * become one validated configuration per run, each in its own folder laid out as AIPerf lays it out
 * (its docs/api/sweep-aggregates.md, "Artifact Directory Layout Reference"):
 *
 * | sweep | runs | run folder |
 * |---|---|---|
 * | no | 1 | `<base>/` |
 * | no | N | `<base>/profile_runs/run_NNNN/` |
 * | yes | 1 | `<base>/<name>_<value>/` (`concurrency_10`, `request_rate_2.5`) |
 * | yes | N, `repeated` (default) | `<base>/profile_runs/trial_NNNN/<name>_<value>/` (every value once per trial) |
 * | yes | N, `independent` | `<base>/<name>_<value>/profile_runs/trial_NNNN/` (every trial of a value, then the next) |
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import type { RunLabels } from '../util/run-env.js';
import type { ProfileConfigInput } from './fields.js';
import { defaultArtifactDir, type ProfileConfig } from './resolve.js';
import { resolvesToFixedSchedule } from './rules.js';
import { profileConfig } from './schema.js';

/** A configuration whose `--concurrency` and `--request-rate` may be lists (a sweep). */
export type SweepInput = Omit<ProfileConfigInput, 'concurrency' | 'requestRate'> & {
  concurrency?: number | number[] | undefined;
  requestRate?: number | number[] | undefined;
};

/** The seed every run of a multi-run uses when `--random-seed` is not given (AIPerf's). */
export const MULTI_RUN_DEFAULT_SEED = 42;

/** The swept option: AIPerf's parameter name and the values in order. */
export interface SweepAxis {
  name: 'concurrency' | 'request_rate';
  values: number[];
}

/** One run of a command: its configuration and its place among the command's runs. */
export interface PlannedRun {
  config: ProfileConfig;
  labels: RunLabels;
  /** Its sweep value's folder name (`concurrency_10`); null without a sweep. */
  valueDir: string | null;
}

/** Every run of one `tokenload profile` command. */
export interface RunSetPlan {
  runs: PlannedRun[];
  /** The folder holding every run (a lone run's own folder). */
  baseDir: string;
  sweep: SweepAxis | null;
  /** `--num-profile-runs`. */
  trials: number;
  confidenceLevel: number;
  /** `--profile-run-cooldown-seconds`: before a run that starts a new trial. */
  cooldownSeconds: number;
  /** `--parameter-sweep-cooldown-seconds`: before the next value of the same trial. */
  sweepCooldownSeconds: number;
  /** `--parameter-sweep-mode`. */
  mode: 'repeated' | 'independent';
}

const listOf = (v: number | number[] | undefined): Array<number | undefined> =>
  v === undefined ? [undefined] : Array.isArray(v) ? v : [v];

function checkSweep(concurrencies: unknown[], rates: unknown[], input: SweepInput): void {
  if (concurrencies.length > 1 && rates.length > 1)
    throw new ConfigError('sweep one of --concurrency or --request-rate, not both.', '--concurrency');
  const fixed = resolvesToFixedSchedule(input);
  const several = concurrencies.length > 1 || rates.length > 1 || (input.numProfileRuns ?? 1) > 1;
  if (several && input.startAtMs !== undefined)
    throw new ConfigError(
      '--start-at cannot be combined with a sweep or --num-profile-runs: it is the start of one run (start each run with its own command).',
      '--start-at',
    );
  if (concurrencies.length > 1 && fixed)
    throw new ConfigError(
      'sweeps (lists in --concurrency) are not allowed with a fixed schedule.',
      '--concurrency',
    );
}

/** The folder name of a sweep value, AIPerf's `{parameter}_{value}`. */
export function sweepValueDir(axis: SweepAxis['name'], value: number): string {
  return `${axis}_${value}`;
}

const pad4 = (n: number): string => String(n).padStart(4, '0');

/**
 * Every run of `input`, validated, in the order they run (a sweep with several runs: every value
 * of trial 1, then of trial 2, AIPerf's `repeated` order). Seeds follow AIPerf: with several runs
 * and `--set-consistent-seed` (the default) every trial uses `--random-seed` (else 42); a sweep's
 * value i uses that seed + i; without a seed (one run per value, or `--no-set-consistent-seed`)
 * each run draws its own. With `--profile-run-disable-warmup-after-first` (the default) only the
 * first run of a multi-run keeps its warmup.
 * @throws {ConfigError} naming the option, as {@link profileConfig}, or for a sweep of both lists.
 */
export function planRunSet(input: SweepInput): RunSetPlan {
  const concurrencies = listOf(input.concurrency);
  const rates = listOf(input.requestRate);
  checkSweep(concurrencies, rates, input);
  const axis = axisOf(concurrencies, rates);
  const first = profileConfig({
    ...input,
    concurrency: concurrencies[0],
    requestRate: rates[0],
  } as ProfileConfigInput);
  const trials = first.numProfileRuns;
  const baseDir = input.artifactDir ?? baseDirOf(first, axis);
  const set: SetFacts = {
    input,
    axis,
    trials,
    baseDir,
    many: trials > 1 || axis !== null,
    sweepId: trials > 1 || axis !== null ? randomUUID() : null,
    baseSeed:
      input.randomSeed ?? (trials > 1 && first.setConsistentSeed ? MULTI_RUN_DEFAULT_SEED : undefined),
    warmAll: !first.profileRunDisableWarmupAfterFirst,
    sameSeed: first.parameterSweepSameSeed,
    independent: axis !== null && trials > 1 && first.parameterSweepMode === 'independent',
    fixed: { concurrency: concurrencies[0], requestRate: rates[0] },
  };
  const runs: PlannedRun[] = [];
  const values = axis?.values ?? [undefined];
  const cells = set.independent
    ? values.flatMap((value, index) =>
        Array.from({ length: trials }, (_, trial) => ({ trial, index, value })),
      )
    : Array.from({ length: trials }, (_, trial) =>
        values.map((value, index) => ({ trial, index, value })),
      ).flat();
  for (const cell of cells) runs.push(plannedRun(set, { ...cell, first: runs.length === 0 }));
  return {
    runs,
    baseDir,
    sweep: axis,
    trials,
    confidenceLevel: first.confidenceLevel,
    cooldownSeconds: first.profileRunCooldownSeconds,
    sweepCooldownSeconds: first.parameterSweepCooldownSeconds,
    mode: first.parameterSweepMode,
  };
}

/** The swept option of a command, or null without a list. */
function axisOf(
  concurrencies: Array<number | undefined>,
  rates: Array<number | undefined>,
): SweepAxis | null {
  if (concurrencies.length > 1) return { name: 'concurrency', values: concurrencies as number[] };
  if (rates.length > 1) return { name: 'request_rate', values: rates as number[] };
  return null;
}

/** The default folder of a run set: a lone run's, or AIPerf's `<model>-openai-<endpoint>-<parameter>_sweep`. */
function baseDirOf(first: ProfileConfig, axis: SweepAxis | null): string {
  return axis === null
    ? first.artifactDir
    : defaultArtifactDir(first.models[0], first.endpointType, `${axis.name}_sweep`);
}

/** What every run of a set shares. */
interface SetFacts {
  input: SweepInput;
  axis: SweepAxis | null;
  trials: number;
  baseDir: string;
  /** More than one run: each gets a folder below `baseDir`. */
  many: boolean;
  sweepId: string | null;
  baseSeed: number | undefined;
  /** `--no-profile-run-disable-warmup-after-first`. */
  warmAll: boolean;
  /** `--parameter-sweep-same-seed`. */
  sameSeed: boolean;
  /** A sweep with several runs in `independent` mode: `<value>/profile_runs/trial_NNNN/`. */
  independent: boolean;
  /** The load options when they are not the swept one. */
  fixed: { concurrency: number | undefined; requestRate: number | undefined };
}

/** Every warm-up option unset: a trial after the first runs without a warm-up (its load options would be refused alone). */
const NO_WARMUP = {
  warmupRequestCount: undefined,
  warmupDurationSeconds: undefined,
  numWarmupSessions: undefined,
  warmupConcurrency: undefined,
  warmupRequestRate: undefined,
  warmupArrivalPattern: undefined,
  warmupPrefillConcurrency: undefined,
  warmupGracePeriodSeconds: undefined,
  warmupConcurrencyRampSeconds: undefined,
  warmupPrefillConcurrencyRampSeconds: undefined,
  warmupRequestRateRampSeconds: undefined,
  warmupUntilCached: false,
  warmupMaxRounds: undefined,
} as const;

/** One run of a set: trial `trial`, sweep value `index` (`value`), `first` of the whole set. */
function plannedRun(
  set: SetFacts,
  at: { trial: number; index: number; value: number | undefined; first: boolean },
): PlannedRun {
  const { axis } = set;
  const seed = set.baseSeed === undefined ? undefined : set.baseSeed + (set.sameSeed ? 0 : at.index);
  const warm = at.first || set.trials === 1 || set.warmAll;
  const config = profileConfig({
    ...set.input,
    concurrency: axis?.name === 'concurrency' ? at.value : set.fixed.concurrency,
    requestRate: axis?.name === 'request_rate' ? at.value : set.fixed.requestRate,
    ...(seed === undefined ? {} : { randomSeed: seed }),
    ...(warm ? {} : NO_WARMUP),
  } as ProfileConfigInput);
  const valueDir = axis === null || at.value === undefined ? null : sweepValueDir(axis.name, at.value);
  const trialName = `${axis === null ? 'run' : 'trial'}_${pad4(at.trial + 1)}`;
  const trialDir = set.trials > 1 ? join('profile_runs', trialName) : '';
  if (set.many)
    config.artifactDir = set.independent
      ? join(set.baseDir, valueDir ?? '', trialDir)
      : join(set.baseDir, trialDir, valueDir ?? '');
  const labels: RunLabels = {
    sweepId: set.sweepId,
    trial: at.trial,
    runLabel: `run_${pad4(at.trial + 1)}`,
    variationLabel: valueDir ?? 'base',
    variationIndex: at.index,
    variationValues: axis === null || at.value === undefined ? {} : { [`loadgen.${axis.name}`]: at.value },
  };
  return { config, labels, valueDir };
}

/**
 * One validated {@link ProfileConfig} per run ({@link planRunSet}): one without a sweep or
 * `--num-profile-runs`.
 * @throws {ConfigError} as {@link planRunSet}.
 */
export function profileConfigs(input: SweepInput): ProfileConfig[] {
  return planRunSet(input).runs.map((r) => r.config);
}
