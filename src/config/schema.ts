/**
 * The configuration of one `tokenload profile` run: one zod schema ({@link ProfileConfigSchema}) is
 * the single source of every option's name, flag, type, unit, default, help text and cross-field
 * rule. The CLI's options, the `-f` config file, {@link profileConfig} for library callers and the
 * redacted `input_config` of the summary are all derived from it.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { stimulusName } from '../timing/registry.js';
import { optionFields, parseOptions, setAt, valueAt } from '../util/option-meta.js';
import { REDACTED } from '../util/redact.js';
import { endpointFields, inputFields, loadFields, outputFields, scheduleFields } from './fields.js';
import { CONFIG_RULES, resolvesToFixedSchedule } from './rules.js';

/** Every option field, as given (before defaults that depend on other fields are resolved). */
export const ProfileFieldsSchema = z.strictObject({
  ...endpointFields,
  ...inputFields,
  ...scheduleFields,
  ...loadFields,
  ...outputFields,
});

/** The fields after per-field defaults, before cross-field resolution. */
type ProfileFields = z.output<typeof ProfileFieldsSchema>;

/**
 * Everything a profile run needs: every field of {@link ProfileFieldsSchema} with the defaults that
 * depend on other fields resolved (fixed schedule implied by a timestamped trace, a drawn random seed,
 * the AIPerf-style artifact folder, …). Field docs are on the schema's fields in `./fields.ts`.
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
  /** Synthetic dataset options; absent with an `--input-file`. */
  synthetic?: ProfileFields['synthetic'];
  /** `--request-cancellation-delay`, s; present (default 0) only with a cancellation rate. */
  requestCancellationDelaySeconds?: number;
};

/** What a library caller or the CLI gives: any subset of the options; `models` is required. */
export type ProfileConfigInput = z.input<typeof ProfileFieldsSchema>;

/** AIPerf-style run folder name: `artifacts/<model>-openai-<endpoint>-<stimulus>`, `/` → `_`. */
export function defaultArtifactDir(model: string, endpointType: string, stimulus: string): string {
  return join('artifacts', `${model.replaceAll('/', '_')}-openai-${endpointType}-${stimulus}`);
}

function resolve(f: ProfileFields): ProfileConfig {
  const { synthetic, requestCancellationDelaySeconds, randomSeed, ...rest } = f;
  const fixedSchedule = resolvesToFixedSchedule(f);
  const config: ProfileConfig = {
    ...rest,
    fixedSchedule,
    fixedScheduleAutoOffset: f.fixedScheduleStartOffsetMs === undefined ? f.fixedScheduleAutoOffset : false,
    randomSeed: randomSeed ?? Math.floor(Math.random() * 2 ** 31),
    tokenizer: f.tokenizer ?? (f.models[0] as string),
    ui: f.ui === 'dashboard' ? 'simple' : f.ui,
    artifactDir: f.artifactDir ?? '',
    ...(f.inputFile === undefined && synthetic !== undefined ? { synthetic } : {}),
    ...(f.requestCancellationRatePct === undefined
      ? {}
      : { requestCancellationDelaySeconds: requestCancellationDelaySeconds ?? 0 }),
  };
  if (f.artifactDir === undefined) {
    config.artifactDir = defaultArtifactDir(f.models[0] as string, f.endpointType, stimulusName(config));
  }
  return config;
}

/**
 * The whole schema: fields, then every cross-field rule of `./rules.ts`, then the resolved
 * {@link ProfileConfig}. `parse` is idempotent: a resolved configuration parses to itself.
 */
export const ProfileConfigSchema = ProfileFieldsSchema.superRefine((fields, ctx) => {
  for (const r of CONFIG_RULES) {
    const message = r.check(fields);
    if (message !== null) ctx.addIssue({ code: 'custom', message, params: { option: r.option } });
  }
}).transform(resolve);

/**
 * A validated, complete {@link ProfileConfig} from any subset of options (library callers; the CLI
 * builds its configurations the same way).
 * @throws {ConfigError} (`E_CONFIG`) naming the option: a bad value (`--request-rate: expected a
 *   number > 0, got -1`), an unknown option, or a broken cross-field rule.
 */
export function profileConfig(input: ProfileConfigInput): ProfileConfig {
  return parseOptions(ProfileConfigSchema, input, (message, option) => new ConfigError(message, option));
}

/** A configuration whose `--concurrency` and `--request-rate` may be lists (a sweep). */
export type SweepInput = Omit<ProfileConfigInput, 'concurrency' | 'requestRate'> & {
  concurrency?: number | number[] | undefined;
  requestRate?: number | number[] | undefined;
};

const listOf = (v: number | number[] | undefined): Array<number | undefined> =>
  v === undefined ? [undefined] : Array.isArray(v) ? v : [v];

function checkSweep(concurrencies: unknown[], rates: unknown[], input: SweepInput): void {
  if (concurrencies.length > 1 && rates.length > 1)
    throw new ConfigError('sweep one of --concurrency or --request-rate, not both.', '--concurrency');
  const fixed = resolvesToFixedSchedule({
    simulator: false,
    simulatorOptions: {},
    ...input,
    concurrency: undefined,
    requestRate: undefined,
  });
  if ((concurrencies.length > 1 || rates.length > 1) && input.startAtMs !== undefined)
    throw new ConfigError(
      '--start-at cannot be combined with a sweep: it is the start of one run (start each value with its own command).',
      '--start-at',
    );
  if (concurrencies.length > 1 && fixed)
    throw new ConfigError(
      'sweeps (lists in --concurrency) are not allowed with a fixed schedule.',
      '--concurrency',
    );
}

/**
 * One validated {@link ProfileConfig} per sweep value (one without a sweep). A sweep's runs go to
 * `<artifact dir>/<stimulus>/`, the artifact dir defaulting to `artifacts/<model>-openai-<endpoint>-sweep`.
 * @throws {ConfigError} naming the option, as {@link profileConfig}, or for a sweep of both lists.
 */
export function profileConfigs(input: SweepInput): ProfileConfig[] {
  const concurrencies = listOf(input.concurrency);
  const rates = listOf(input.requestRate);
  checkSweep(concurrencies, rates, input);
  const sweep = concurrencies.length > 1 || rates.length > 1;
  const out: ProfileConfig[] = [];
  for (const concurrency of concurrencies) {
    for (const requestRate of rates) {
      const config = profileConfig({ ...input, concurrency, requestRate } as ProfileConfigInput);
      if (sweep) {
        const root =
          input.artifactDir ?? defaultArtifactDir(config.models[0] as string, config.endpointType, 'sweep');
        config.artifactDir = join(root, stimulusName(config));
      }
      out.push(config);
    }
  }
  return out;
}

/**
 * The configuration as the summary's `input_config` stores it: every option whose schema field is
 * marked secret (`--api-key`) replaced by `<redacted>`. The exporter then redacts secret-looking
 * keys and auth headers anywhere else (`--extra-inputs`, `-H`) by name.
 */
export function inputConfigOf(config: ProfileConfig): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(config);
  for (const field of SECRET_FIELDS) {
    if (valueAt(out, field.path) !== undefined) setAt(out, field.path, REDACTED);
  }
  return out;
}

const SECRET_FIELDS = optionFields(ProfileFieldsSchema).filter((f) => f.meta.secret === true);
