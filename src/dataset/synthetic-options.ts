/**
 * Options of the synthetic dataset (runs without `--input-file`), their AIPerf defaults, checking, and
 * the `--seq-dist` parser. Lengths are in tokens, delays in ms.
 */
import { TokenloadError } from '../errors.js';

/** Options of {@link generateSyntheticDataset} (`./synthetic.js`); every field maps to an AIPerf flag. */
export interface SyntheticDatasetOptions {
  /** `--random-seed`; any safe integer, 0 included. Resolve "no seed" to a concrete one before calling. */
  randomSeed: number;
  /** `--num-dataset-entries`: conversations to generate (default 100). */
  numDatasetEntries?: number;
  /** `--isl`: mean prompt tokens per turn (default 550). */
  isl?: number;
  /** `--isl-stddev` (default 0). */
  islStddev?: number;
  /** `--osl`: mean output tokens; undefined = no `maxTokens` on the turns. */
  osl?: number;
  /** `--osl-stddev` (default 0). */
  oslStddev?: number;
  /** `--seq-dist "ISL,OSL:pct;ISL|sd,OSL|sd:pct"`: per-turn (ISL, OSL) mixture; overrides isl/osl. */
  seqDist?: string;
  /** `--num-prefix-prompts`: size of the shared-prefix pool (default 0 = no pool). */
  numPrefixPrompts?: number;
  /** `--prefix-prompt-length`: tokens of each pool prefix (default 0). */
  prefixPromptLength?: number;
  /** `--shared-system-prompt-length`: tokens shared by every conversation. */
  sharedSystemPromptLength?: number;
  /** `--user-context-prompt-length`: tokens unique to each conversation, after the shared ones. */
  userContextPromptLength?: number;
  /** `--session-turns-mean` (default 1). */
  sessionTurnsMean?: number;
  /** `--session-turns-stddev` (default 0). */
  sessionTurnsStddev?: number;
  /** `--session-turn-delay-mean` in ms, after the previous turn completes (default 0 = no delay). */
  sessionTurnDelayMeanMs?: number;
  /** `--session-turn-delay-stddev` in ms (default 0). */
  sessionTurnDelayStddevMs?: number;
  /** `--session-turn-delay-ratio`: multiplies every sampled delay (default 1). */
  sessionTurnDelayRatio?: number;
  /** Block size of the prefix hash ids (`--isl-block-size`; default 16). */
  blockSize?: number;
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

function check(ok: boolean, option: string, expected: string, got: unknown): void {
  if (!ok) throw new SyntheticOptionError(`${option}: expected ${expected}, got ${String(got)}`, option);
}

function intAtLeast(value: number, min: number, option: string): number {
  check(Number.isSafeInteger(value) && value >= min, option, `an integer >= ${min}`, value);
  return value;
}

function numberAtLeast(value: number, min: number, option: string): number {
  check(Number.isFinite(value) && value >= min, option, `a number >= ${min}`, value);
  return value;
}

function parseLength(text: string, what: string, entry: string): { mean: number; stddev: number } {
  const [meanText, sdText, extra] = text.split('|').map((s) => s.trim());
  const mean = Number(meanText);
  const stddev = sdText === undefined ? 0 : Number(sdText);
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
  const percent = Number(entry.slice(colon + 1).trim());
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

function resolvePrefixPool(o: SyntheticDatasetOptions): { size: number; length: number } {
  const count = intAtLeast(o.numPrefixPrompts ?? 0, 0, '--num-prefix-prompts');
  const length = intAtLeast(o.prefixPromptLength ?? 0, 0, '--prefix-prompt-length');
  if (count === 0 && length === 0) return { size: 0, length: 0 };
  return {
    size: count === 0 ? 1 : count,
    length: length === 0 ? SYNTHETIC_DEFAULTS.prefixPromptLength : length,
  };
}

function resolveContextPrompts(o: SyntheticDatasetOptions, poolSize: number) {
  const shared = intAtLeast(o.sharedSystemPromptLength ?? 0, 0, '--shared-system-prompt-length');
  const user = intAtLeast(o.userContextPromptLength ?? 0, 0, '--user-context-prompt-length');
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
 * Applies defaults and checks ranges.
 * @throws {SyntheticOptionError} naming the flag: a seed that is not a safe integer, a count or length
 *   below its minimum, a negative stddev or delay, a malformed `--seq-dist`, or a prefix pool combined
 *   with shared-system / user-context prompts.
 */
export function resolveSyntheticOptions(o: SyntheticDatasetOptions): ResolvedSyntheticOptions {
  check(Number.isSafeInteger(o.randomSeed), '--random-seed', 'an integer', o.randomSeed);
  const pool = resolvePrefixPool(o);
  const context = resolveContextPrompts(o, pool.size);
  return {
    randomSeed: o.randomSeed,
    entries: intAtLeast(
      o.numDatasetEntries ?? SYNTHETIC_DEFAULTS.numDatasetEntries,
      1,
      '--num-dataset-entries',
    ),
    isl: numberAtLeast(o.isl ?? SYNTHETIC_DEFAULTS.isl, 1, '--isl'),
    islStddev: numberAtLeast(o.islStddev ?? 0, 0, '--isl-stddev'),
    osl: o.osl === undefined ? undefined : numberAtLeast(o.osl, 1, '--osl'),
    oslStddev: numberAtLeast(o.oslStddev ?? 0, 0, '--osl-stddev'),
    seqDist: o.seqDist === undefined ? undefined : parseSeqDist(o.seqDist),
    prefixPoolSize: pool.size,
    prefixLength: pool.length,
    sharedSystemLength: context.shared,
    userContextLength: context.user,
    turnsMean: numberAtLeast(
      o.sessionTurnsMean ?? SYNTHETIC_DEFAULTS.sessionTurnsMean,
      1,
      '--session-turns-mean',
    ),
    turnsStddev: numberAtLeast(o.sessionTurnsStddev ?? 0, 0, '--session-turns-stddev'),
    delayMeanMs: numberAtLeast(o.sessionTurnDelayMeanMs ?? 0, 0, '--session-turn-delay-mean'),
    delayStddevMs: numberAtLeast(o.sessionTurnDelayStddevMs ?? 0, 0, '--session-turn-delay-stddev'),
    delayRatio: numberAtLeast(
      o.sessionTurnDelayRatio ?? SYNTHETIC_DEFAULTS.sessionTurnDelayRatio,
      0,
      '--session-turn-delay-ratio',
    ),
    blockSize: intAtLeast(o.blockSize ?? SYNTHETIC_DEFAULTS.blockSize, 1, '--isl-block-size'),
  };
}
