/**
 * The options of `tokenload profile`, derived from the run's configuration schema
 * ({@link ProfileFieldsSchema}), and their resolution into one {@link ProfileConfig} per sweep value:
 * config-file values first, flags typed on the command line over them, then the schema's defaults
 * and cross-field rules.
 */
import { Command, CommanderError } from 'commander';
import { ProfileFieldsSchema } from '../config/fields.js';
import { endpointFields } from '../config/fields-endpoint.js';
import { inputFields } from '../config/fields-input.js';
import { loadFields } from '../config/fields-load.js';
import { outputFields } from '../config/fields-output.js';
import { scheduleFields } from '../config/fields-schedule.js';
import type { ProfileConfig } from '../config/resolve.js';
import { simulatorUrlProblem } from '../config/rules.js';
import { planRunSet, type RunSetPlan, type SweepInput } from '../config/sweep.js';
import { type DetectedType, detectDatasetType } from '../dataset/detect.js';
import { anyRowTimestamped } from '../dataset/timestamp-scan.js';
import { ConfigError } from '../errors.js';
import { type OptionField, optionFields } from '../util/option-meta.js';
import { collectUrls } from '../util/option-values.js';
import { REDACTED, redactConfig, redactUrlPasswords } from '../util/redact.js';
import { mapAiperfArgs, type OwnOptionLookup } from './aiperf-args.js';
import { AIPERF_OPTIONS } from './aiperf-options.js';
import { readConfigFile } from './config-file.js';
import { addSchemaOptions, type SchemaFlags } from './schema-options.js';

/** Every option field of `profile`, in `--help` order. */
const PROFILE_FIELDS = optionFields(ProfileFieldsSchema);

const GROUPS: Array<[string, object]> = [
  ['Endpoint:', endpointFields],
  ['Input:', inputFields],
  ['Fixed schedule:', scheduleFields],
  ['Load:', loadFields],
  ['Output:', outputFields],
];

function groupOf(field: OptionField): string {
  if (field.path[0] === 'synthetic') return 'Synthetic data (without --input-file):';
  return GROUPS.find(([, fields]) => Object.hasOwn(fields, field.path[0] as string))?.[0] ?? 'Options:';
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** `over` on top of `base`; plain objects (headers, extra inputs, nested groups) merge key by key. */
function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] = isPlainObject(prev) && isPlainObject(value) ? merge(prev, value) : value;
  }
  return out;
}

/**
 * Adds every `profile` option to `cmd`, plus `-f/--config`, each option's help naming its AIPerf
 * aliases and a closing line on the AIPerf options refused; returns the reader of typed flags.
 */
export function defineProfileOptions(cmd: Command): SchemaFlags {
  const flags = addSchemaOptions(cmd, PROFILE_FIELDS, {}, groupOf);
  cmd.option('-f, --config <file>', 'YAML or JSON file of flag values (command-line flags win)');
  for (const option of cmd.options) {
    const names = AIPERF_OPTIONS.filter((o) => o.status.kind === 'alias' && o.status.ours === option.long);
    if (names.length > 0) option.description += ` (AIPerf: ${names.map((o) => o.flag).join(', ')})`;
  }
  const refused = AIPERF_OPTIONS.filter((o) => o.status.kind === 'refused').map((o) => o.flag);
  cmd.addHelpText(
    'after',
    `\nAIPerf's option names work as well (listed beside each option above). AIPerf options tokenload refuses, each with its reason (docs/aiperf.md, "AIPerf's options"): ${refused.join(', ')}.`,
  );
  return flags;
}

/** The repeatable flags of `profile` (their values accumulate). */
const REPEATABLE_FLAGS = new Set(
  PROFILE_FIELDS.filter((f) => f.meta.repeatable === true).map((f) => `--${f.meta.flag}`),
);

/** Looks an option of `cmd` up by a flag as typed (long, short or `--no-` form). */
function ownOptionLookup(cmd: Command): OwnOptionLookup {
  return (flag) => {
    const option = cmd.options.find((o) => o.long === flag || o.short === flag);
    if (option === undefined) return undefined;
    const long = option.long ?? flag;
    return {
      id: option.attributeName(),
      long,
      takesValue: option.required || option.optional,
      repeatable: REPEATABLE_FLAGS.has(long),
    };
  };
}

/**
 * `args` (the arguments after `profile`) with AIPerf's option names mapped onto `cmd`'s options
 * (./aiperf-args.ts), ready for commander.
 * @throws {ConfigError} for a refused AIPerf option, naming it and why.
 */
export function mapProfileArgs(cmd: Command, args: readonly string[]): string[] {
  return mapAiperfArgs(args, ownOptionLookup(cmd));
}

/**
 * The configurations a `tokenload profile` command line gives (one, or one per sweep value),
 * exactly as the CLI builds them: AIPerf names mapped, flags parsed, `-f` files read, rules checked.
 * Nothing is run.
 * @param args - the arguments after `profile`, e.g. `['-m', 'm', '--synthetic-input-tokens-mean', '128']`.
 * @throws {ConfigError} naming the flag, with the message the CLI prints: a refused AIPerf option
 *   (with its reason), an unknown option, a value the option does not take, or `--help`/`--version`
 *   (which ask for text, not a run).
 * @throws {ConfigError} when `--input-file` is given without `--custom-dataset-type` and its type
 *   cannot be detected; {DatasetError} when that file cannot be read.
 */
export function parseProfileArgs(args: readonly string[]): ProfileConfig[] {
  const cmd = new Command('profile')
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  const flags = defineProfileOptions(cmd);
  try {
    cmd.parse(mapProfileArgs(cmd, args), { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    const asked = err.code === 'commander.helpDisplayed' || err.code === 'commander.version';
    const message = asked
      ? 'profile arguments: --help asks for the help text (tokenload profile --help), not a run'
      : err.message.replace(/^error: /, '');
    throw new ConfigError(message);
  }
  return resolveProfileConfigs(cmd, flags, ['profile', ...args]);
}

/** Flags whose whole value is secret (`--api-key`), as typed, long and short. */
const SECRET_FLAGS = new Set(
  PROFILE_FIELDS.filter((f) => f.meta.secret === true).flatMap((f) => [
    `--${f.meta.flag}`,
    f.meta.short ?? '',
  ]),
);
const HEADER_FLAGS = new Set(
  PROFILE_FIELDS.filter((f) => f.path[0] === 'headers').flatMap((f) => [
    `--${f.meta.flag}`,
    f.meta.short ?? '',
  ]),
);

/** Flags whose value is a URL or a list of them (`--url`, `--server-metrics`), as typed. */
const URL_FLAGS = new Set(
  PROFILE_FIELDS.filter((f) => f.meta.unit === 'url').flatMap((f) => [
    `--${f.meta.flag}`,
    f.meta.short ?? '',
  ]),
);

/**
 * One argument as the command line is recorded: secret values, auth-like header values and URL
 * passwords (`http://user:pw@host`; after a URL flag also without a scheme) redacted.
 */
function redactArg(flag: string | undefined, arg: string): string {
  if (flag !== undefined && SECRET_FLAGS.has(flag)) return REDACTED;
  if (flag !== undefined && HEADER_FLAGS.has(flag)) {
    return String((redactConfig({ headers: [arg] }) as { headers: string[] }).headers[0]);
  }
  const eq = arg.indexOf('=');
  if (arg.startsWith('--') && eq > 0) {
    const name = arg.slice(0, eq);
    if (SECRET_FLAGS.has(name) || HEADER_FLAGS.has(name) || URL_FLAGS.has(name))
      return `${name}=${redactArg(name, arg.slice(eq + 1))}`;
  }
  return redactUrlPasswords(arg, flag !== undefined && URL_FLAGS.has(flag));
}

/**
 * The command line as the artifacts and the console record it: `tokenload` and `args`, with the
 * values of secret flags (`--api-key`), auth-like `-H` header values and URL passwords replaced by
 * `<redacted>`.
 */
export function recordedCommandLine(args: readonly string[]): string {
  return ['tokenload', ...args.map((arg, i) => redactArg(args[i - 1], arg))].join(' ');
}

/**
 * The validated configurations of a parsed `profile` command: one, or one per sweep value.
 * `onDetected` hears a detected dataset type; `onNote` one line on any other decision taken from the
 * input file (a `mooncake_trace` without timestamps sent without a fixed schedule).
 * @param args - the arguments as typed (after `tokenload`), recorded with secrets redacted.
 * @throws {ConfigError} naming the flag (or the config file and key).
 */
export function resolveProfileConfigs(
  cmd: Command,
  flags: SchemaFlags,
  args: readonly string[],
  onDetected?: (detected: DetectedType) => void,
  onNote?: (line: string) => void,
): ProfileConfig[] {
  return resolveProfilePlan(cmd, flags, args, { onDetected, onNote }).runs.map((r) => r.config);
}

/** Who hears the decisions {@link resolveProfilePlan} takes from the input file. */
export interface PlanListeners {
  /** A detected dataset type. */
  onDetected?: (detected: DetectedType) => void;
  /** One line on any other decision (a `mooncake_trace` without timestamps sent without a fixed schedule). */
  onNote?: (line: string) => void;
}

/**
 * Every run of a parsed `profile` command with its place among them (config/sweep.ts
 * {@link planRunSet}): one, one per sweep value, and each of them `--num-profile-runs` times.
 * @throws {ConfigError} as {@link resolveProfileConfigs}.
 */
export function resolveProfilePlan(
  cmd: Command,
  flags: SchemaFlags,
  args: readonly string[],
  listeners: PlanListeners = {},
): RunSetPlan {
  return planRunSet(resolveProfileInput(cmd, flags, args, listeners));
}

/**
 * The input of a parsed `profile` command before it is planned into runs ({@link resolveProfilePlan}):
 * `-f` file values under the typed flags, the command line recorded, the dataset type detected and
 * a timestamp-less `mooncake_trace`'s schedule decided. Not yet validated (`tokenload search` sets
 * its searched option on it first).
 * @throws {ConfigError} for `--simulator` with a `--url`, or an undetectable dataset type.
 */
export function resolveProfileInput(
  cmd: Command,
  flags: SchemaFlags,
  args: readonly string[],
  listeners: PlanListeners = {},
): SweepInput {
  const file = cmd.getOptionValue('config') as string | undefined;
  const fromFile = file === undefined ? {} : readConfigFile(file, PROFILE_FIELDS);
  const input = merge(merge(fromFile, flags.read(cmd)), { commandLine: recordedCommandLine(args) });
  refuseSimulatorWithUrl(input);
  const typed = withDatasetType(input, listeners.onDetected);
  return withImpliedSchedule(typed, listeners.onNote) as SweepInput;
}

/**
 * `--simulator` with a `--url` typed (or in the config file), even the default one: the run would
 * measure the simulator, not the server the command names. (The schema's own rule can only tell a
 * URL other than the default; the command line knows what was typed.)
 * @throws {ConfigError} naming `--url`.
 */
function refuseSimulatorWithUrl(input: Record<string, unknown>): void {
  if (input.simulator !== true || input.url === undefined) return;
  const typed = (Array.isArray(input.url) ? input.url : [input.url]).map(String);
  let urls: string[];
  try {
    urls = typed.reduce<string[]>((prev, item) => collectUrls(item, prev), []);
  } catch {
    return; // a malformed --url: the schema names its problem
  }
  throw new ConfigError(simulatorUrlProblem(urls), '--url');
}

/**
 * `input` with the fixed schedule a `mooncake_trace` implies turned off when none of its rows has a
 * timestamp and `--fixed-schedule` / `--no-fixed-schedule` was not given: the rows are then sent
 * by `--concurrency` or `--request-rate`, as AIPerf sends them (dataset/timestamp-scan.ts); `note`
 * hears the one line saying so. An explicit `--fixed-schedule` is kept (the replay then stops at the
 * first row without a timestamp, naming the file and line).
 */
function withImpliedSchedule(
  input: Record<string, unknown>,
  note: ((line: string) => void) | undefined,
): Record<string, unknown> {
  const file = input.inputFile;
  if (typeof file !== 'string' || input.customDatasetType !== 'mooncake_trace') return input;
  if (input.fixedSchedule !== undefined || anyRowTimestamped(file)) return input;
  note?.(
    `${file}: no row has a timestamp, so the mooncake_trace is not replayed on a fixed schedule: its rows are sent by ${input.requestRate === undefined ? '--concurrency' : '--request-rate'}, each once in file order (as AIPerf does; --fixed-schedule asks for the schedule)`,
  );
  return { ...input, fixedSchedule: false };
}

/**
 * `input` with the dataset type of its `--input-file` detected when `--custom-dataset-type` is not
 * given (dataset/detect.ts, AIPerf's auto-detection); `onDetected` hears what was found and why.
 * @throws {ConfigError} naming file, line and why when the type cannot be told; {DatasetError} when
 *   the file cannot be read.
 */
function withDatasetType(
  input: Record<string, unknown>,
  onDetected: ((detected: DetectedType) => void) | undefined,
): Record<string, unknown> {
  const file = input.inputFile;
  if (typeof file !== 'string' || input.customDatasetType !== undefined) return input;
  const detected = detectDatasetType(file);
  onDetected?.(detected);
  return { ...input, customDatasetType: detected.type };
}
