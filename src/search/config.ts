/**
 * The options of `tokenload search` beyond `profile`'s: one zod schema whose fields carry their flag
 * metadata (as config/fields-*.ts do, so `--help` and docs/flags.md come from it), and the search
 * specification they resolve to ({@link SearchSpec}). The SLO flags are AIPerf's (its
 * docs/sweeping/find-max-passing-concurrency.md, "SLA flags"): `--search-sla TAG:STAT:OP:THRESHOLD`
 * and the shorthands `--ttft-sla-ms`, `--itl-sla-ms`, `--e2e-sla-ms`, `--error-rate-sla`.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { METRICS } from '../metrics/registry.js';
import type { MetricDef } from '../metrics/types.js';
import { option, optionFields } from '../util/option-meta.js';
import { plainNumber } from '../util/plain-number.js';
import { closestName } from '../util/suggest.js';
import type { SearchAxis, Sla, SlaOp, SlaStat } from './types.js';

/** The SLO tag of the failed fraction of requests: failed / (succeeded + failed), a fraction in [0, 1]. */
export const ERROR_RATE_TAG = 'request_error_rate';

/** The stats `--search-sla` takes. */
export const SLA_STATS: readonly SlaStat[] = ['avg', 'p50', 'p90', 'p95', 'p99'];
/** The comparisons `--search-sla` takes. */
export const SLA_OPS: readonly SlaOp[] = ['lt', 'le', 'gt', 'ge'];

/** The summary's name of the option each axis varies (`swept_dim_path`). */
export const SWEPT_DIM_PATH = {
  'request-rate': 'request_rate',
  concurrency: 'concurrency',
  speedup: 'synthesis_speedup_ratio',
} as const satisfies Record<SearchAxis, string>;

/** The configuration field each axis sets on a probe's run. */
export const SWEPT_FIELD = {
  'request-rate': 'requestRate',
  concurrency: 'concurrency',
  speedup: 'synthesisSpeedupRatio',
} as const satisfies Record<SearchAxis, string>;

/** The flag a user would type for the searched field (refused beside `--search-over`). */
export const SWEPT_FLAG = {
  'request-rate': '--request-rate',
  concurrency: '--concurrency',
  speedup: '--synthesis-speedup-ratio',
} as const satisfies Record<SearchAxis, string>;

const append = (v: string, prev: unknown): string[] => [...((prev as string[] | undefined) ?? []), v];

/** The search's own options (their text as typed; {@link searchSpecOf} checks and reads them). */
export const SearchFieldsSchema = z.object({
  searchOver: option(z.enum(['request-rate', 'concurrency', 'speedup']).optional(), {
    flag: 'search-over',
    unit: 'axis',
    help: 'what the search varies (required): request-rate, concurrency, or speedup (--synthesis-speedup-ratio of a --fixed-schedule trace replay)',
  }),
  searchRange: option(z.string().optional(), {
    flag: 'search-range',
    unit: 'lo,hi',
    help: 'the loads probed lie in [lo, hi] (required; 0 < lo < hi; whole numbers for concurrency)',
  }),
  searchSla: option(z.array(z.string()).default([]), {
    flag: 'search-sla',
    unit: 'tag:stat:op:threshold',
    help: 'an SLO, e.g. time_to_first_token:p95:lt:500 (stat avg|p50|p90|p95|p99, op lt|le|gt|ge, threshold in the metric unit); repeatable',
    parse: append,
    repeatable: true,
  }),
  ttftSlaMs: option(z.number().positive().optional(), {
    flag: 'ttft-sla-ms',
    unit: 'ms',
    help: 'SLO time_to_first_token:p95:lt:<ms> (needs --streaming)',
  }),
  itlSlaMs: option(z.number().positive().optional(), {
    flag: 'itl-sla-ms',
    unit: 'ms',
    help: 'SLO inter_token_latency:p95:lt:<ms> (needs --streaming)',
  }),
  e2eSlaMs: option(z.number().positive().optional(), {
    flag: 'e2e-sla-ms',
    unit: 'ms',
    help: 'SLO request_latency:p99:lt:<ms>',
  }),
  errorRateSla: option(z.number().min(0).max(1).optional(), {
    flag: 'error-rate-sla',
    unit: 'fraction',
    help: 'SLO request_error_rate:p99:lt:<fraction> (failed / all requests, in [0, 1])',
  }),
  sloAttainmentFraction: option(z.number().gt(0).max(1).optional(), {
    flag: 'slo-attainment-fraction',
    unit: 'fraction',
    help: 'a probe also needs this fraction of its requests (failed ones count as missing) to meet every per-request SLO, as --goodput counts them',
  }),
  searchPrecision: option(z.number().gt(0).lt(1).default(0.05), {
    flag: 'search-precision',
    unit: 'fraction',
    help: 'stop when (first failing − last passing load) / last passing load is at most this',
  }),
  searchMaxProbes: option(z.number().int().min(2).max(1000).default(20), {
    flag: 'search-max-probes',
    unit: 'n',
    help: 'probes in all (trials and re-probes included)',
  }),
  resume: option(z.string().min(1).optional(), {
    flag: 'resume',
    unit: 'dir',
    help: "continue the search in dir (its search_history.json); the search flags must match the history's",
  }),
});

/** The search options as typed (the schema's input). */
export type SearchFlags = z.input<typeof SearchFieldsSchema>;

/** Every option field of the search's own flags, in `--help` order. */
export const SEARCH_FIELDS = optionFields(SearchFieldsSchema);

/** What a `tokenload search` command asks for, checked. */
export interface SearchSpec {
  searchOver: SearchAxis;
  lo: number;
  hi: number;
  /** Shorthand SLOs first (ttft, itl, e2e, error rate), then `--search-sla` in command-line order. */
  slas: Sla[];
  /** `--slo-attainment-fraction`; null without it. */
  attainmentFraction: number | null;
  precision: number;
  maxProbes: number;
  /** `--num-profile-runs`: trials of each new load. */
  trials: number;
  /** `--resume`: the folder whose search continues; null for a new search. */
  resumeDir: string | null;
}

/**
 * The search specification of the typed search flags (`raw`, the schema's input) and the probe's
 * `--streaming` and `--num-profile-runs`.
 * @throws {ConfigError} naming the flag: a missing `--search-over` / `--search-range`, a bad range,
 *   a malformed SLO, an unknown metric tag, a stat the metric has not, no SLO, or a TTFT/ITL SLO
 *   without `--streaming`.
 */
export function searchSpecOf(raw: SearchFlags, probe: { streaming: boolean; trials: number }): SearchSpec {
  const parsed = SearchFieldsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = SEARCH_FIELDS.find((f) => f.path[0] === issue?.path[0]);
    const flag = field === undefined ? 'search option' : `--${field.meta.flag}`;
    throw new ConfigError(`${flag}: ${issue?.message ?? 'invalid value'}`, flag);
  }
  const flags = parsed.data;
  if (flags.searchOver === undefined)
    throw new ConfigError('--search-over is required: request-rate, concurrency or speedup', '--search-over');
  const range = parseRange(flags.searchRange, flags.searchOver);
  const slas = slasOf(flags);
  for (const sla of slas) checkStreaming(sla, probe.streaming);
  return {
    searchOver: flags.searchOver,
    ...range,
    slas,
    attainmentFraction: flags.sloAttainmentFraction ?? null,
    precision: flags.searchPrecision,
    maxProbes: flags.searchMaxProbes,
    trials: probe.trials,
    resumeDir: flags.resume ?? null,
  };
}

/**
 * `--search-range LO,HI` read and checked.
 * @throws {ConfigError} naming `--search-range`.
 */
function parseRange(text: string | undefined, axis: SearchAxis): { lo: number; hi: number } {
  const flag = '--search-range';
  if (text === undefined) throw new ConfigError(`${flag} LO,HI is required`, flag);
  const parts = text.split(',').map((s) => s.trim());
  const integer = axis === 'concurrency';
  const [lo, hi] = parts.map((p) => plainNumber(p, false));
  if (
    parts.length !== 2 ||
    lo === undefined ||
    hi === undefined ||
    !Number.isFinite(lo) ||
    !Number.isFinite(hi)
  )
    throw new ConfigError(`${flag} ${text}: expected two numbers LO,HI (e.g. 1,64)`, flag);
  if (lo <= 0) throw new ConfigError(`${flag} ${text}: LO must be above 0`, flag);
  if (lo >= hi) throw new ConfigError(`${flag} ${text}: LO must be below HI (an empty range)`, flag);
  if (integer && (!Number.isInteger(lo) || !Number.isInteger(hi)))
    throw new ConfigError(
      `${flag} ${text}: a concurrency range is whole numbers of requests (e.g. 1,64)`,
      flag,
    );
  return { lo, hi };
}

/** The SLOs of the flags: shorthands first, then `--search-sla` in order. */
function slasOf(flags: z.output<typeof SearchFieldsSchema>): Sla[] {
  const slas: Sla[] = [];
  const short = (metric_tag: string, stat: SlaStat, threshold: number | undefined, source: string): void => {
    if (threshold !== undefined) slas.push({ metric_tag, stat, op: 'lt', threshold, source });
  };
  short('time_to_first_token', 'p95', flags.ttftSlaMs, '--ttft-sla-ms');
  short('inter_token_latency', 'p95', flags.itlSlaMs, '--itl-sla-ms');
  short('request_latency', 'p99', flags.e2eSlaMs, '--e2e-sla-ms');
  short(ERROR_RATE_TAG, 'p99', flags.errorRateSla, '--error-rate-sla');
  for (const text of flags.searchSla) slas.push(parseSla(text));
  if (slas.length === 0)
    throw new ConfigError(
      'no SLO: give at least one of --search-sla TAG:STAT:OP:THRESHOLD, --ttft-sla-ms, --itl-sla-ms, --e2e-sla-ms, --error-rate-sla',
      '--search-sla',
    );
  return slas;
}

/** Record metrics (per request: every stat) the SLOs may name. */
function recordTags(): string[] {
  return Object.values(METRICS as Record<string, MetricDef>)
    .filter((d) => d.kind === 'record' && d.flags.errorOnly !== true)
    .map((d) => d.tag);
}

/** Run-level metrics (one value per run: only `avg`) the SLOs may name. */
function runTags(): string[] {
  return Object.values(METRICS as Record<string, MetricDef>)
    .filter((d) => d.kind !== 'record')
    .map((d) => d.tag);
}

/** Every tag an SLO may name. */
export function slaTags(): string[] {
  return [...recordTags(), ...runTags(), ERROR_RATE_TAG];
}

/** The metric's unit, from the registry (`ms`, `requests/sec`); `fraction` for the error rate. */
export function slaUnit(tag: string): string {
  if (tag === ERROR_RATE_TAG) return 'fraction';
  return (METRICS as Record<string, MetricDef>)[tag]?.unit ?? '';
}

/**
 * One `--search-sla TAG:STAT:OP:THRESHOLD`, strictly four fields.
 * @throws {ConfigError} naming `--search-sla` and the value.
 */
export function parseSla(text: string): Sla {
  const flag = '--search-sla';
  const parts = text.split(':');
  if (parts.length !== 4)
    throw new ConfigError(
      `${flag} ${text}: expected TAG:STAT:OP:THRESHOLD, e.g. time_to_first_token:p95:lt:500`,
      flag,
    );
  const [tag, stat, op, value] = parts.map((p) => p.trim()) as [string, string, string, string];
  checkTag(tag, text);
  if (!(SLA_STATS as readonly string[]).includes(stat))
    throw new ConfigError(`${flag} ${text}: stat "${stat}" is not one of ${SLA_STATS.join(', ')}`, flag);
  if (!(SLA_OPS as readonly string[]).includes(op))
    throw new ConfigError(`${flag} ${text}: op "${op}" is not one of ${SLA_OPS.join(', ')}`, flag);
  if (stat !== 'avg' && runTags().includes(tag))
    throw new ConfigError(
      `${flag} ${text}: ${tag} is one value per run, so only avg applies (${tag}:avg:${op}:${value})`,
      flag,
    );
  const threshold = plainNumber(value, false);
  if (threshold === undefined || !Number.isFinite(threshold))
    throw new ConfigError(`${flag} ${text}: threshold "${value}" is not a finite number`, flag);
  const sla: Sla = { metric_tag: tag, stat: stat as SlaStat, op: op as SlaOp, threshold, source: flag };
  checkThreshold(sla, text);
  checkDirection(sla, text);
  return sla;
}

/** Run-level fractions: an SLO on one needs a threshold in [0, 1]. */
const FRACTIONS = [ERROR_RATE_TAG, 'good_request_fraction'];

/** A threshold the metric can reach: in [0, 1] for a fraction, above 0 for a time (ms). */
function checkThreshold(sla: Sla, text: string): void {
  const t = sla.threshold;
  const fraction = FRACTIONS.includes(sla.metric_tag);
  if (fraction ? t < 0 || t > 1 : slaUnit(sla.metric_tag) === 'ms' && t <= 0)
    throw new ConfigError(
      `--search-sla ${text}: ${sla.metric_tag} ${fraction ? 'is a fraction: the threshold must lie in [0, 1]' : 'is a time: the threshold must be above 0 ms'}`,
      '--search-sla',
    );
}

/** Run-level figures that grow with the load offered (a floor on them is met more easily the higher the load). */
const GROWS_WITH_LOAD = /(_throughput|^goodput)$/;

/**
 * The search looks for the largest load meeting every SLO, so each must get harder as load grows. A
 * floor on a run's throughput gets easier (more load, more throughput): refused, with the way to say it.
 */
function checkDirection(sla: Sla, text: string): void {
  if (!runTags().includes(sla.metric_tag) || !GROWS_WITH_LOAD.test(sla.metric_tag)) return;
  if (sla.op !== 'gt' && sla.op !== 'ge') return;
  throw new ConfigError(
    `--search-sla ${text}: ${sla.metric_tag} grows with load, so a floor on it is met more easily the higher the load, and the search looks for the largest load that meets every SLO; bound it from above (lt/le), or put floors on per-request figures (e.g. output_token_throughput_per_user:p50:gt:X)`,
    '--search-sla',
  );
}

function checkTag(tag: string, text: string): void {
  const tags = slaTags();
  if (tags.includes(tag)) return;
  const guess = closestName(tag, tags);
  throw new ConfigError(
    `--search-sla ${text}: "${tag}" is not a metric tokenload exports${guess === null ? '' : ` (did you mean ${guess}?)`}; known tags: ${tags.join(', ')}`,
    '--search-sla',
  );
}

/** TTFT and ITL exist only on a streamed run. */
function checkStreaming(sla: Sla, streaming: boolean): void {
  const needs = ['time_to_first_token', 'inter_token_latency', 'time_to_second_token'];
  if (streaming || !needs.includes(sla.metric_tag)) return;
  throw new ConfigError(
    `${sla.source} (${sla.metric_tag}) needs --streaming: without it the run measures no ${sla.metric_tag}`,
    sla.source,
  );
}
