/**
 * AIPerf's trace synthesis (`--synthesis-*`), row by row once the trace's shared ids are known: one
 * pure function of a row, the id of its session and the shared ids, so that a streamed replay, a
 * whole-file load and `tokenload synthesize-trace` give the same requests. Memory: the shared-id
 * table (grows with the distinct ids of the file, dataset/shared-ids.ts), built only when a prompt
 * is rescaled.
 *
 * Order, as AIPerf's trace loaders: rows outside the offset window or whose trace `input_length`
 * exceeds the max ISL are dropped (and counted) before sessions are formed; then each kept row's
 * prompt and output length are scaled, and the output length capped at the max OSL.
 *
 * What each option does to a row with `hash_ids` (dataset/block-scale.ts has the exact rule, AIPerf's):
 * - prefix-len multiplier: stretches (or shrinks) the row's PREFIX, its leading run of shared ids
 *   (ids that occur more than once among the kept rows: dataset/shared-ids.ts, counted in a pre-pass
 *   over the file). Rows that shared prefix blocks share the stretched blocks.
 * - prompt-len multiplier: scales the rest of the row (its own blocks and tail), never the prefix.
 * - prefix-root multiplier R: each session (a Bailian chain, a Mooncake `session_id`, or a row alone)
 *   goes to one of R copies of the prefix tree, chosen from a hash of its session id, and every block
 *   of a copy other than 0 gets an id of that copy. Sessions that shared a prefix share it only when
 *   in the same copy; a session's turns stay in one copy. AIPerf draws the copy per row.
 * - output-len multiplier: `output_length` × x, rounded, at least 1; then capped at the max OSL.
 * With every multiplier at its default a row is left as it is (AIPerf runs no synthesis then).
 */
import { fmix32 } from '../util/fmix32.js';
import { scaleSyntheticPrompt } from './block-scale.js';
import type { SharedIds } from './shared-ids.js';
import type { SkipCounts, TraceSynthesis, Turn } from './types.js';

/** Dataset types whose rows take trace synthesis (AIPerf: the trace loaders). */
export const SYNTHESIS_DATASET_TYPES = ['bailian_trace', 'mooncake_trace'] as const;

/** AIPerf's defaults: every multiplier 1, no caps. */
export const SYNTHESIS_DEFAULTS: TraceSynthesis = {
  prefixLenMultiplier: 1,
  prefixRootMultiplier: 1,
  promptLenMultiplier: 1,
  outputLenMultiplier: 1,
};

const MULTIPLIERS = ['prefixLenMultiplier', 'promptLenMultiplier', 'outputLenMultiplier'] as const;
const INTEGERS = ['prefixRootMultiplier', 'maxIsl', 'maxOsl'] as const;

/**
 * The first invalid field of `s`, as `<field>: expected …, got …`, or undefined when it is valid
 * (multipliers > 0; the root multiplier and the caps positive integers).
 */
export function synthesisProblem(s: Partial<TraceSynthesis>): string | undefined {
  for (const key of MULTIPLIERS) {
    const v = s[key];
    if (v !== undefined && !(Number.isFinite(v) && v > 0)) return `${key}: expected a number > 0, got ${v}`;
  }
  for (const key of INTEGERS) {
    const v = s[key];
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 1))
      return `${key}: expected a positive integer, got ${v}`;
  }
  return undefined;
}

/** True when `s` asks for nothing (every multiplier 1, no cap): AIPerf runs no synthesis then. */
export function isIdentitySynthesis(s: TraceSynthesis): boolean {
  return (
    s.prefixLenMultiplier === 1 &&
    s.prefixRootMultiplier === 1 &&
    s.promptLenMultiplier === 1 &&
    s.outputLenMultiplier === 1 &&
    s.maxIsl === undefined &&
    s.maxOsl === undefined
  );
}

/** True when `s` rescales prompts, so the loaders need the trace's shared ids (a pre-pass when streaming). */
export function scalesPrompt(s: TraceSynthesis | undefined): boolean {
  if (s === undefined) return false;
  return s.prefixLenMultiplier !== 1 || s.promptLenMultiplier !== 1 || s.prefixRootMultiplier !== 1;
}

/**
 * Timestamp after `--synthesis-speedup-ratio`: `tsMs / ratio` rounded to the nanosecond (from the
 * timestamp's own whole nanoseconds), so a trace rewritten with the ratio replays on exactly the
 * schedule of the original replayed with it. Unchanged at ratio 1.
 */
export function speedupMs(tsMs: number, ratio: number): number {
  if (ratio === 1) return tsMs;
  return Math.round(Math.round(tsMs * 1e6) / ratio) / 1e6;
}

/** Sets the synthesis counters of `skipped` that `s` can move to 0 (the others stay absent). */
export function initSynthesisCounts(skipped: SkipCounts, s: TraceSynthesis | undefined): void {
  if (s === undefined) return;
  if (s.maxIsl !== undefined) skipped.overMaxIsl ??= 0;
  if (s.maxOsl !== undefined) skipped.maxOslCapped ??= 0;
  if (scalesPrompt(s)) skipped.promptUnscaled ??= 0;
}

/** True when the max ISL drops `turn`: a prompt of `input_length` tokens over it (checked before scaling). */
export function overMaxIsl(turn: Turn, s: TraceSynthesis | undefined): boolean {
  const max = s?.maxIsl;
  return max !== undefined && turn.prompt.kind === 'synthetic' && turn.prompt.inputLength > max;
}

/** Copy of the prefix tree a session goes to: a hash of its id, 0 … `roots` − 1. */
export function rootCopyOf(sessionId: string, roots: number): number {
  if (roots === 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i += 1) h = fmix32((h ^ sessionId.charCodeAt(i)) >>> 0);
  return h % roots;
}

function scaleOutput(turn: Turn, s: TraceSynthesis, skipped: SkipCounts): void {
  if (turn.maxTokens === undefined) return;
  const m = s.outputLenMultiplier;
  const scaled = m === 1 ? turn.maxTokens : Math.max(1, Math.round(turn.maxTokens * m));
  if (s.maxOsl !== undefined && scaled > s.maxOsl) {
    turn.maxTokens = s.maxOsl;
    skipped.maxOslCapped = (skipped.maxOslCapped ?? 0) + 1;
  } else turn.maxTokens = scaled;
}

/**
 * Applies `s` to one kept row's turn, in place: its synthetic prompt rescaled (new `inputLength`
 * and `hashIds`), its `maxTokens` scaled and capped; counts capped outputs and prompts the options
 * could not scale in `skipped`. A pure function of (turn, session id, `s`, `shared`).
 * @param sessionId the id of the session the row joins (chooses its prefix-tree copy).
 * @param shared the trace's shared ids; needed when {@link scalesPrompt}.
 * @throws {Error} when `s` rescales prompts and `shared` is missing (a loader's bug).
 */
export function synthesizeTurn(
  turn: Turn,
  sessionId: string,
  s: TraceSynthesis,
  shared: SharedIds | undefined,
  skipped: SkipCounts,
): void {
  const prompt = turn.prompt;
  if (scalesPrompt(s)) {
    if (shared === undefined) throw new Error('trace synthesis: the shared ids were not counted');
    if (prompt.kind === 'synthetic') {
      const scaled = scaleSyntheticPrompt(prompt, {
        prefixFactor: s.prefixLenMultiplier,
        promptFactor: s.promptLenMultiplier,
        copy: rootCopyOf(sessionId, s.prefixRootMultiplier),
        isShared: (id) => shared.isShared(id),
      });
      turn.prompt = { ...prompt, ...scaled };
    } else skipped.promptUnscaled = (skipped.promptUnscaled ?? 0) + 1;
  }
  scaleOutput(turn, s, skipped);
}
