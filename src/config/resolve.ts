/**
 * Cross-field resolution of a profile configuration: the fields as given (after per-field defaults)
 * become the {@link ProfileConfig} a run reads, with every default that depends on other fields
 * applied here, once.
 */
import { join } from 'node:path';
import { stimulusName } from '../timing/registry.js';
import type { ProfileFields } from './fields.js';
import { resolvesToFixedSchedule } from './rules.js';

/**
 * Everything a profile run needs: every field of the schema with the defaults that depend on other
 * fields resolved (fixed schedule implied by a timestamped trace, a drawn random seed, the
 * AIPerf-style artifact folder, …). Field docs are on the schema's fields in `./fields-*.ts`.
 */
export type ProfileConfig = Omit<
  ProfileFields,
  | 'fixedSchedule'
  | 'randomSeed'
  | 'artifactDir'
  | 'ui'
  | 'synthetic'
  | 'requestCancellationDelaySeconds'
  | 'tokenizer'
> & {
  /** `--tokenizer`, resolved: the first `--model` name when not given. */
  tokenizer: string;
  /** `--fixed-schedule`, resolved: also true for a timestamped dataset type unless `--no-fixed-schedule`. */
  fixedSchedule: boolean;
  /** `--random-seed`, resolved: drawn at random (and recorded) when not given. */
  randomSeed: number;
  /** `--artifact-dir`, resolved: `artifacts/<model>-openai-<endpoint type>-<stimulus>` by default. */
  artifactDir: string;
  /** `--ui`, resolved: `dashboard` is `simple`. */
  ui: 'none' | 'simple';
  /**
   * Synthetic dataset options. With an `--input-file`, only `osl` / `oslStddev` are kept (when `--osl`
   * is given): the output length of the rows that state none, AIPerf's fallback.
   */
  synthetic?: ProfileFields['synthetic'];
  /** `--request-cancellation-delay`, s; present (default 0) only with a cancellation rate. */
  requestCancellationDelaySeconds?: number;
};

/** AIPerf-style run folder name: `artifacts/<model>-openai-<endpoint>-<stimulus>`, `/` → `_`. */
export function defaultArtifactDir(model: string, endpointType: string, stimulus: string): string {
  return join('artifacts', `${model.replaceAll('/', '_')}-openai-${endpointType}-${stimulus}`);
}

/** The synthetic options a run keeps: all of them without an input file, else `--osl` and its stddev. */
function syntheticOf(
  inputFile: string | undefined,
  synthetic: ProfileFields['synthetic'],
): Pick<ProfileConfig, 'synthetic'> {
  if (synthetic === undefined) return {};
  if (inputFile === undefined) return { synthetic };
  const { osl, oslStddev } = synthetic;
  if (osl === undefined) return {};
  return { synthetic: oslStddev === undefined ? { osl } : { osl, oslStddev } };
}

/** The resolved configuration of fields that passed every cross-field rule. */
export function resolve(f: ProfileFields): ProfileConfig {
  const { synthetic, requestCancellationDelaySeconds, randomSeed, ...rest } = f;
  const fixedSchedule = resolvesToFixedSchedule(f);
  const config: ProfileConfig = {
    ...rest,
    fixedSchedule,
    fixedScheduleAutoOffset: f.fixedScheduleStartOffsetMs === undefined ? f.fixedScheduleAutoOffset : false,
    randomSeed: randomSeed ?? Math.floor(Math.random() * 2 ** 31),
    tokenizer: f.tokenizer ?? f.models[0],
    ui: f.ui === 'dashboard' ? 'simple' : f.ui,
    artifactDir: f.artifactDir ?? '',
    ...syntheticOf(f.inputFile, synthetic),
    ...(f.requestCancellationRatePct === undefined
      ? {}
      : { requestCancellationDelaySeconds: requestCancellationDelaySeconds ?? 0 }),
  };
  if (f.artifactDir === undefined) {
    config.artifactDir = defaultArtifactDir(f.models[0], f.endpointType, stimulusName(config));
  }
  return config;
}
