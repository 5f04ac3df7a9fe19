/**
 * The cross-field rules of a profile configuration. Each rule looks at the fields as given (before
 * defaults are resolved) and returns the message of its violation, naming every flag involved, or
 * null. The schema in `./schema.ts` runs them all; the CLI and library callers get the same checks.
 */
import { DATASET_LOADERS, DATASET_TYPE_NAMES } from '../dataset/registry.js';
import { adapterFor, ENDPOINTS } from '../endpoint/registry.js';
import { ConfigError } from '../errors.js';
import { GoodputParseError, parseGoodput } from '../metrics/goodput.js';
import { SimulatorOptionsSchema } from '../simulator/options.js';
import { describeIssue, optionFields } from '../util/option-meta.js';
import { kebab, sessionHeaderClash } from '../util/option-values.js';
import { DEFAULT_URL } from './fields-endpoint.js';
import type { ConfigRule, RuleInput } from './rule-types.js';
import { PHASE_LOAD_RULES, userCentricRules } from './rules-phase-load.js';
import { systemPromptRule } from './rules-prompt.js';
import { rateSeriesRules } from './rules-rate-series.js';
import { serverMetricsFormatsRule, waitForModelRule } from './rules-server.js';
import { shardProblem } from './rules-shard.js';
import { synthesisRule } from './rules-synthesis.js';

/** True when the run replays on the trace's timestamps: `--fixed-schedule`, or implied by the dataset type. */
export function resolvesToFixedSchedule(c: Pick<RuleInput, 'fixedSchedule' | 'customDatasetType'>): boolean {
  const loader = c.customDatasetType === undefined ? undefined : DATASET_LOADERS[c.customDatasetType];
  return c.fixedSchedule ?? loader?.timestamped ?? false;
}

const rule = (option: string, check: (c: RuleInput) => string | null): ConfigRule => ({ option, check });
const when = (cond: boolean, message: string): string | null => (cond ? message : null);

const datasetRules: ConfigRule[] = [
  rule('--custom-dataset-type', (c) =>
    when(
      c.inputFile !== undefined && c.customDatasetType === undefined,
      `--custom-dataset-type is required with --input-file (one of ${DATASET_TYPE_NAMES.join(', ')}).`,
    ),
  ),
  rule('--custom-dataset-type', (c) =>
    when(
      c.inputFile === undefined && c.customDatasetType !== undefined,
      '--custom-dataset-type needs --input-file.',
    ),
  ),
  rule('--bailian-linear-sessions', (c) =>
    when(
      c.bailianLinearSessions === true &&
        (c.inputFile === undefined || c.customDatasetType !== 'bailian_trace'),
      `--bailian-linear-sessions chooses how a Bailian trace's follow-ups form sessions, so it needs --input-file with --custom-dataset-type bailian_trace (got ${c.inputFile === undefined ? 'no --input-file' : `--custom-dataset-type ${c.customDatasetType ?? '(none)'}`}); leave it out.`,
    ),
  ),
];

const scheduleRules: ConfigRule[] = [
  rule('--fixed-schedule-start-offset', (c) =>
    when(
      (c.fixedScheduleStartOffsetMs !== undefined || c.fixedScheduleEndOffsetMs !== undefined) &&
        !resolvesToFixedSchedule(c),
      '--fixed-schedule-start/end-offset require a fixed schedule (--fixed-schedule).',
    ),
  ),
  rule(
    '--fixed-schedule-end-offset',
    ({ fixedScheduleStartOffsetMs: start, fixedScheduleEndOffsetMs: end }) =>
      when(
        start !== undefined && end !== undefined && end < start,
        `--fixed-schedule-end-offset (${end}) must be >= --fixed-schedule-start-offset (${start}).`,
      ),
  ),
  rule('--synthesis-speedup-ratio', (c) =>
    when(
      c.synthesisSpeedupRatio !== 1 && !resolvesToFixedSchedule(c),
      '--synthesis-speedup-ratio divides trace timestamps, so it needs a replay on them: --fixed-schedule (implied by a timestamped --custom-dataset-type unless --no-fixed-schedule).',
    ),
  ),
  rule('--open-loop-replay', (c) =>
    when(
      c.openLoopReplay !== undefined && !resolvesToFixedSchedule(c),
      `--${c.openLoopReplay === false ? 'no-' : ''}open-loop-replay chooses when a trace replay sends a session's later turns (on their timestamps, or after each answer plus the recorded gap), so it needs a replay on the timestamps: --fixed-schedule (implied by a timestamped --custom-dataset-type unless --no-fixed-schedule).`,
    ),
  ),
  rule('--trace-idle-gap-cap-seconds', (c) =>
    when(
      c.traceIdleGapCapSeconds !== undefined && !resolvesToFixedSchedule(c),
      '--trace-idle-gap-cap-seconds shortens the gaps between the timestamps of one session, so it needs a replay on them: --fixed-schedule (implied by a timestamped --custom-dataset-type unless --no-fixed-schedule).',
    ),
  ),
  rule('--fixed-schedule', (c) =>
    when(
      resolvesToFixedSchedule(c) && c.inputFile === undefined,
      '--fixed-schedule needs a timestamped --input-file.',
    ),
  ),
  rule('--request-rate', (c) =>
    when(
      resolvesToFixedSchedule(c) && c.requestRate !== undefined,
      '--request-rate cannot be combined with a fixed schedule (use --no-fixed-schedule).',
    ),
  ),
  rule('--dataset-sampling-strategy', (c) =>
    when(
      resolvesToFixedSchedule(c) && c.datasetSamplingStrategy !== undefined,
      '--dataset-sampling-strategy is not allowed with a fixed schedule.',
    ),
  ),
  rule('--request-rate-ramp-duration', (c) =>
    when(
      resolvesToFixedSchedule(c) && c.requestRateRampSeconds !== undefined,
      '--request-rate-ramp-duration is not allowed with a fixed schedule.',
    ),
  ),
];

const loadRules: ConfigRule[] = [
  rule('--arrival-smoothness', (c) =>
    when(
      c.arrivalSmoothness !== undefined && c.arrivalPattern !== 'gamma',
      '--arrival-smoothness requires --arrival-pattern gamma.',
    ),
  ),
  rule('--arrival-pattern', (c) =>
    when(
      c.arrivalPattern !== undefined && c.requestRate === undefined && c.requestRateSeries === undefined,
      '--arrival-pattern requires --request-rate or --request-rate-series.',
    ),
  ),
  rule('--request-rate-ramp-duration', (c) =>
    when(
      c.requestRateRampSeconds !== undefined && c.requestRate === undefined,
      '--request-rate-ramp-duration requires --request-rate.',
    ),
  ),
  rule('--conversation-num', (c) =>
    when(
      c.conversationNum !== undefined && resolvesToFixedSchedule(c),
      '--conversation-num cannot be combined with a fixed schedule: a trace replays its own sessions; stop it with --request-count, --benchmark-duration or --fixed-schedule-end-offset, or give --no-fixed-schedule.',
    ),
  ),
  rule('--request-cancellation-delay', (c) =>
    when(
      (c.requestCancellationDelaySeconds ?? 0) > 0 && c.requestCancellationRatePct === undefined,
      '--request-cancellation-delay requires --request-cancellation-rate.',
    ),
  ),
  rule('--goodput', (c) => goodputProblem(c.goodput)),
];

function goodputProblem(goodput: string | undefined): string | null {
  if (goodput === undefined) return null;
  try {
    parseGoodput(goodput);
    return null;
  } catch (err) {
    if (err instanceof GoodputParseError) return err.message;
    throw err;
  }
}

const SIMULATOR_FIELDS = optionFields(SimulatorOptionsSchema);

/** The first problem of `--simulator-option` values, named as the user types them. */
function simulatorOptionProblem(c: RuleInput): string | null {
  const opts = c.simulatorOptions;
  if (Object.keys(opts).length === 0) return null;
  if (!c.simulator) return '--simulator-option needs --simulator.';
  for (const [key, value] of Object.entries(opts)) {
    const field = SIMULATOR_FIELDS.find((f) => f.path[0] === key);
    if (field === undefined)
      return `--simulator-option ${kebab(key)}: unknown simulator parameter (see tokenload simulate --help).`;
    const parsed = field.schema.safeParse(value);
    if (!parsed.success && parsed.error.issues[0] !== undefined)
      return `--simulator-option ${field.meta.flag}: ${describeIssue(parsed.error.issues[0], value)}.`;
  }
  return null;
}

/** Endpoints whose server renders a chat template around the messages. */
const TEMPLATED_ENDPOINTS = ['chat', 'responses', 'messages'];

/** The rerank endpoint types: a query and passages per request, read from named texts. */
const RANKINGS_ENDPOINTS: readonly string[] = ['hf_tei_rankings', 'cohere_rankings', 'nim_rankings'];

/**
 * The `template` endpoint type's settings in `--extra-inputs` (its template, the answer's field),
 * checked by building the run's adapter as the run will: a missing template, one naming a variable
 * tokenload cannot fill, one that does not parse, or a `response_field` beyond a field path.
 */
function templateProblem(c: RuleInput): string | null {
  if (c.endpointType !== 'template') return null;
  try {
    adapterFor('template', { extraInputs: c.extraInputs });
    return null;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

/**
 * Why `--url` cannot go with `--simulator`: the run would measure the simulator, not that server. The
 * schema can only tell a URL other than the default; the CLI also refuses a typed default one.
 */
export function simulatorUrlProblem(urls: readonly string[]): string {
  return `--url ${urls.join(',')} with --simulator: the run would measure the built-in simulator, not that server; drop --simulator to profile the server, or --url to use the simulator.`;
}

/** Every cross-field rule, in the order they are checked. */
export const CONFIG_RULES: readonly ConfigRule[] = [
  ...datasetRules,
  ...scheduleRules,
  ...rateSeriesRules(resolvesToFixedSchedule),
  ...loadRules,
  ...PHASE_LOAD_RULES,
  ...userCentricRules(resolvesToFixedSchedule),
  rule('--simulator-option', simulatorOptionProblem),
  rule('--url', (c) => (c.simulator && c.url.join(',') !== DEFAULT_URL ? simulatorUrlProblem(c.url) : null)),
  rule('--apply-chat-template', (c) =>
    when(
      c.applyChatTemplate === true && !TEMPLATED_ENDPOINTS.includes(c.endpointType ?? 'chat'),
      `--apply-chat-template needs --endpoint-type chat, responses or messages: a ${c.endpointType} server counts the prompt text as sent, with no chat template.`,
    ),
  ),
  rule('--endpoint-type', (c) =>
    when(
      RANKINGS_ENDPOINTS.includes(c.endpointType) && c.inputFile === undefined,
      `--endpoint-type ${c.endpointType} without --input-file: synthetic rankings inputs (AIPerf's --rankings-* options, a synthetic query with synthetic passages) are not implemented in tokenload yet; give the queries and passages in a file: --input-file rankings.jsonl --custom-dataset-type single_turn, each line {"texts":[{"name":"query","contents":["…"]},{"name":"passages","contents":["…","…"]}]}.`,
    ),
  ),
  rule('--server-timing', (c) =>
    when(
      c.serverTiming === true && ENDPOINTS[c.endpointType].asksServerTiming !== true,
      `--server-timing asks for the server's per-request timing with include_metrics: true in chat and completions bodies (vLLM); an --endpoint-type ${c.endpointType} request has no such field, so it would change nothing: leave it out.`,
    ),
  ),
  rule('--extra-inputs', templateProblem),
  rule('--trace-session-sample-ratio', (c) =>
    when(
      c.traceSessionSampleRatio !== undefined && c.inputFile === undefined,
      '--trace-session-sample-ratio samples the sessions of an input file: give --input-file (a synthetic dataset is sized by --conversation-num).',
    ),
  ),
  rule('--trace-session-sample-ratio', (c) =>
    when(
      c.traceSessionSampleRatio !== undefined && c.shardCount !== undefined && c.randomSeed === undefined,
      '--trace-session-sample-ratio with --shard-count needs --random-seed: each shard would otherwise draw its own seed and sample other sessions.',
    ),
  ),
  rule('--session-header', (c) => sessionHeaderClash(c.headers, c.sessionHeaders)),
  waitForModelRule,
  serverMetricsFormatsRule,
  rule('--shard-count', (c) => shardProblem(c, resolvesToFixedSchedule(c))),
  synthesisRule,
  systemPromptRule,
];
