import { z } from 'zod';
/**
 * Options of the synthetic dataset (runs without `--input-file`), their AIPerf defaults, checking, and
 * the `--seq-dist` parser. Lengths are in tokens, delays in ms.
 */
import { TokenloadError } from '../errors.js';
import { option, parseOptions } from '../util/option-meta.js';
import { plainNumber } from '../util/plain-number.js';

/** Defaults (AIPerf `aiperf profile`). */
export const SYNTHETIC_DEFAULTS = {
  numDatasetEntries: 100,
  isl: 550,
  sessionTurnsMean: 1,
  sessionTurnDelayRatio: 1,
  blockSize: 16,
  /** Prefix length used when only `--num-prefix-prompts` is given (AIPerf). */
  prefixPromptLength: 128,
} as const;

const count = (min: number) => z.number().int().min(min).optional();
const atLeast = (min: number) => z.number().min(min).optional();
const shown = (v: number): string => String(v);

/**
 * The synthetic dataset's options (runs without `--input-file`), each carrying its AIPerf flag.
 * Lengths are in tokens, delays in ms. Defaults are applied by {@link resolveSyntheticOptions}.
 */
export const SyntheticOptionsSchema = z.strictObject({
  /** `--num-dataset-entries`: conversations to generate. */
  numDatasetEntries: option(count(1), {
    flag: 'num-dataset-entries',
    unit: 'n',
    help: 'synthetic: conversations to generate',
    defaultText: shown(SYNTHETIC_DEFAULTS.numDatasetEntries),
  }),
  /** `--isl`: mean prompt tokens per turn, an integer (AIPerf's `int`). */
  isl: option(count(1), {
    flag: 'isl',
    unit: 'tokens',
    help: 'synthetic: mean input length (a prompt over 1048576 tokens, 2^20, is warned about; one over 16777216, 2^24, refused: no model reads it)',
    defaultText: shown(SYNTHETIC_DEFAULTS.isl),
  }),
  /** `--isl-stddev`, tokens. */
  islStddev: option(atLeast(0), {
    flag: 'isl-stddev',
    unit: 'tokens',
    help: 'synthetic: input length stddev',
    defaultText: '0',
  }),
  /**
   * `--osl`: mean output tokens, an integer (AIPerf's `int`); undefined = no `maxTokens` on the turns.
   * With `--input-file`, the output length of rows without their own `output_length` (osl-fallback.ts).
   */
  osl: option(count(1), {
    flag: 'osl',
    unit: 'tokens',
    help: 'mean output length (synthetic; with --input-file: rows without output_length)',
    defaultText: 'unset: no max tokens',
  }),
  /** `--osl-stddev`, tokens. */
  oslStddev: option(atLeast(0), {
    flag: 'osl-stddev',
    unit: 'tokens',
    help: 'output length stddev (as --osl)',
    defaultText: '0',
  }),
  /** `--seq-dist "ISL,OSL:pct;ISL|sd,OSL|sd:pct"`: per-turn (ISL, OSL) mixture; overrides isl/osl. */
  seqDist: option(z.string().optional(), {
    flag: 'seq-dist',
    unit: 'spec',
    help: 'synthetic: "ISL,OSL:pct;ISL|sd,OSL|sd:pct" mixture',
  }),
  /** `--num-prefix-prompts`: size of the shared-prefix pool (0 = no pool). */
  numPrefixPrompts: option(count(0), {
    flag: 'num-prefix-prompts',
    unit: 'n',
    help: 'synthetic: shared prefix pool size',
    defaultText: '0',
  }),
  /** `--prefix-prompt-length`: tokens of each pool prefix. */
  prefixPromptLength: option(count(0), {
    flag: 'prefix-prompt-length',
    unit: 'tokens',
    help: `synthetic: tokens per pooled prefix (${SYNTHETIC_DEFAULTS.prefixPromptLength} when only --num-prefix-prompts is given)`,
    defaultText: '0',
  }),
  /** `--shared-system-prompt-length`: tokens shared by every conversation. */
  sharedSystemPromptLength: option(count(0), {
    flag: 'shared-system-prompt-length',
    unit: 'tokens',
    help: 'synthetic: prefix shared by all sessions',
    defaultText: '0',
  }),
  /** `--user-context-prompt-length`: tokens unique to each conversation, after the shared ones. */
  userContextPromptLength: option(count(0), {
    flag: 'user-context-prompt-length',
    unit: 'tokens',
    help: 'synthetic: per-session prefix',
    defaultText: '0',
  }),
  /** `--session-turns-mean`. */
  sessionTurnsMean: option(atLeast(1), {
    flag: 'session-turns-mean',
    unit: 'n',
    help: 'synthetic: turns per session',
    defaultText: shown(SYNTHETIC_DEFAULTS.sessionTurnsMean),
  }),
  /** `--session-turns-stddev`. */
  sessionTurnsStddev: option(atLeast(0), {
    flag: 'session-turns-stddev',
    unit: 'n',
    help: 'synthetic: turns stddev',
    defaultText: '0',
  }),
  /** `--session-turn-delay-mean`, ms after the previous turn completes. */
  sessionTurnDelayMeanMs: option(atLeast(0), {
    flag: 'session-turn-delay-mean',
    unit: 'ms',
    help: 'synthetic: delay after the previous turn',
    defaultText: '0',
  }),
  /** `--session-turn-delay-stddev`, ms. */
  sessionTurnDelayStddevMs: option(atLeast(0), {
    flag: 'session-turn-delay-stddev',
    unit: 'ms',
    help: 'synthetic: delay stddev',
    defaultText: '0',
  }),
  /** `--session-turn-delay-ratio`: multiplies every sampled delay. */
  sessionTurnDelayRatio: option(atLeast(0), {
    flag: 'session-turn-delay-ratio',
    unit: 'x',
    help: 'synthetic: delay multiplier',
    defaultText: shown(SYNTHETIC_DEFAULTS.sessionTurnDelayRatio),
  }),
});

/** The synthetic options a run configuration carries (`ProfileConfig.synthetic`). */
export type SyntheticOptions = z.infer<typeof SyntheticOptionsSchema>;

/** Options of {@link generateSyntheticDataset} (`./synthetic.js`). */
export interface SyntheticDatasetOptions extends SyntheticOptions {
  /** `--random-seed`; any safe integer, 0 included. Resolve "no seed" to a concrete one before calling. */
  randomSeed: number;
  /** Block size of the prefix hash ids (`--isl-block-size`; default 16). */
  blockSize?: number | undefined;
}

/** One `--seq-dist` component: lengths with their stddevs, and its share in percent. */
export interface SeqDistEntry {
  isl: number;
  islStddev: number;
  osl: number;
  oslStddev: number;
  percent: number;
}

/** {@link SyntheticDatasetOptions} with defaults applied and checked. */
export interface ResolvedSyntheticOptions {
  randomSeed: number;
  entries: number;
  isl: number;
  islStddev: number;
  osl: number | undefined;
  oslStddev: number;
  seqDist: SeqDistEntry[] | undefined;
  /** Prefix pool size, 0 when there is no pool. */
  prefixPoolSize: number;
  prefixLength: number;
  sharedSystemLength: number;
  userContextLength: number;
  turnsMean: number;
  turnsStddev: number;
  delayMeanMs: number;
  delayStddevMs: number;
  delayRatio: number;
  blockSize: number;
}

/** A bad synthetic-data option; `option` is the AIPerf flag name. */
export class SyntheticOptionError extends TokenloadError {
  override readonly name = 'SyntheticOptionError';
  constructor(
    message: string,
    readonly option: string,
  ) {
    super('E_CONFIG', message);
  }
}

function check(ok: boolean, option: string, expected: string, got: unknown): void {
  if (!ok) throw new SyntheticOptionError(`${option}: expected ${expected}, got ${String(got)}`, option);
}

function intAtLeast(value: number, min: number, option: string): number {
  check(Number.isSafeInteger(value) && value >= min, option, `an integer >= ${min}`, value);
  return value;
}

function parseLength(text: string, what: string, entry: string): { mean: number; stddev: number } {
  const [meanText, sdText, extra] = text.split('|').map((s) => s.trim());
  // A length is a token count: digits only, as --isl and --osl (util/plain-number.ts); its stddev any decimal.
  const mean = plainNumber(meanText ?? '', true) ?? Number.NaN;
  const stddev = sdText === undefined ? 0 : (plainNumber(sdText, false) ?? Number.NaN);
  const ok = extra === undefined && meanText !== '' && sdText !== '' && Number.isFinite(mean) && mean >= 1;
  check(
    ok && Number.isFinite(stddev) && stddev >= 0,
    '--seq-dist',
    `${what} like 512 or 512|50 in "${entry}"`,
    text,
  );
  return { mean, stddev };
}

function parseSeqDistEntry(entry: string): SeqDistEntry {
  const colon = entry.lastIndexOf(':');
  const lengths = (colon === -1 ? '' : entry.slice(0, colon)).split(',');
  check(colon !== -1 && lengths.length === 2, '--seq-dist', 'entries like "ISL,OSL:percent"', entry);
  const percent = plainNumber(entry.slice(colon + 1).trim(), false) ?? Number.NaN;
  check(Number.isFinite(percent) && percent > 0, '--seq-dist', `a percent > 0 in "${entry}"`, percent);
  const isl = parseLength(lengths[0]!, 'an ISL', entry);
  const osl = parseLength(lengths[1]!, 'an OSL', entry);
  return { isl: isl.mean, islStddev: isl.stddev, osl: osl.mean, oslStddev: osl.stddev, percent };
}

/**
 * Parses `--seq-dist`: `;`-separated entries `ISL,OSL:percent`, each length optionally `mean|stddev`.
 * Percents must add up to 100 (±0.01).
 * @throws {SyntheticOptionError} naming the bad entry.
 */
export function parseSeqDist(text: string): SeqDistEntry[] {
  const entries = text
    .split(';')
    .map((e) => e.trim())
    .filter((e) => e.length > 0)
    .map(parseSeqDistEntry);
  check(entries.length > 0, '--seq-dist', 'at least one "ISL,OSL:percent" entry', JSON.stringify(text));
  const total = entries.reduce((sum, e) => sum + e.percent, 0);
  check(Math.abs(total - 100) <= 0.01, '--seq-dist', 'percents adding up to 100', total);
  return entries;
}

function resolvePrefixPool(o: SyntheticOptions): { size: number; length: number } {
  const count = o.numPrefixPrompts ?? 0;
  const length = o.prefixPromptLength ?? 0;
  if (count === 0 && length === 0) return { size: 0, length: 0 };
  return {
    size: count === 0 ? 1 : count,
    length: length === 0 ? SYNTHETIC_DEFAULTS.prefixPromptLength : length,
  };
}

function resolveContextPrompts(o: SyntheticOptions, poolSize: number) {
  const shared = o.sharedSystemPromptLength ?? 0;
  const user = o.userContextPromptLength ?? 0;
  if (poolSize > 0 && shared + user > 0) {
    throw new SyntheticOptionError(
      '--shared-system-prompt-length / --user-context-prompt-length cannot be combined with a prefix pool ' +
        '(--num-prefix-prompts / --prefix-prompt-length)',
      '--shared-system-prompt-length',
    );
  }
  return { shared, user };
}

/**
 * Applies defaults and checks ranges against {@link SyntheticOptionsSchema}.
 * @throws {SyntheticOptionError} naming the flag: a seed that is not a safe integer, a count or length
 *   below its minimum, a negative stddev or delay, a malformed `--seq-dist`, or a prefix pool combined
 *   with shared-system / user-context prompts.
 */
export function resolveSyntheticOptions(options: SyntheticDatasetOptions): ResolvedSyntheticOptions {
  const { randomSeed, blockSize, ...rest } = options;
  check(Number.isSafeInteger(randomSeed), '--random-seed', 'an integer', randomSeed);
  const o = parseOptions(SyntheticOptionsSchema, rest, (m, flag) => new SyntheticOptionError(m, flag));
  const pool = resolvePrefixPool(o);
  const context = resolveContextPrompts(o, pool.size);
  return {
    randomSeed,
    entries: o.numDatasetEntries ?? SYNTHETIC_DEFAULTS.numDatasetEntries,
    isl: o.isl ?? SYNTHETIC_DEFAULTS.isl,
    islStddev: o.islStddev ?? 0,
    osl: o.osl,
    oslStddev: o.oslStddev ?? 0,
    seqDist: o.seqDist === undefined ? undefined : parseSeqDist(o.seqDist),
    prefixPoolSize: pool.size,
    prefixLength: pool.length,
    sharedSystemLength: context.shared,
    userContextLength: context.user,
    turnsMean: o.sessionTurnsMean ?? SYNTHETIC_DEFAULTS.sessionTurnsMean,
    turnsStddev: o.sessionTurnsStddev ?? 0,
    delayMeanMs: o.sessionTurnDelayMeanMs ?? 0,
    delayStddevMs: o.sessionTurnDelayStddevMs ?? 0,
    delayRatio: o.sessionTurnDelayRatio ?? SYNTHETIC_DEFAULTS.sessionTurnDelayRatio,
    blockSize: intAtLeast(blockSize ?? SYNTHETIC_DEFAULTS.blockSize, 1, '--isl-block-size'),
  };
}
