/**
 * Synthetic dataset for runs without `--input-file` (the semantics of AIPerf's synthetic composer,
 * `aiperf/dataset/composer/synthetic.py` in github.com/ai-dynamo/aiperf):
 * - `numDatasetEntries` conversations; each has `max(1, …)` turns drawn from
 *   (`sessionTurnsMean`, `sessionTurnsStddev`) with {@link samplePositiveInt}.
 * - Every turn draws its own prompt length from (`isl`, `islStddev`) and, when `osl` is set, its
 *   `maxTokens` from (`osl`, `oslStddev`); with `seqDist` it first picks a mixture component by its
 *   percent, then draws both lengths from that component. Without `osl` or `seqDist` there is no
 *   `maxTokens`.
 * - Turns after the first get `delayMs` = sample(`sessionTurnDelayMeanMs`, stddev) ×
 *   `sessionTurnDelayRatio` when the mean is > 0 (a delay after the previous turn completes).
 * - Conversations use `deltas_without_responses` (history with live replies accumulates).
 *
 * Shared prefixes go on the FIRST turn only (later turns resend it as history) and add to its
 * length. They are expressed as synthetic hash ids of `blockSize` tokens, in reserved id ranges, so
 * the prompt stage gives every prompt with the same ids a byte-identical prefix:
 * - prefix pool: each conversation picks one of `numPrefixPrompts` prefixes uniformly; prefix k is
 *   ids `PREFIX_POOL_ID_BASE + k·b + j` (b = ⌊prefixPromptLength / blockSize⌋);
 * - `sharedSystemPromptLength` S + `userContextPromptLength` U: the first ⌊S/B⌋ blocks are shared by
 *   every conversation (`SHARED_SYSTEM_ID_BASE + j`), the blocks up to ⌊(S+U)/B⌋ are unique to the
 *   conversation (`USER_CONTEXT_ID_BASE + i·u + j`).
 * The shared part is thus the prefix length rounded down to whole blocks (servers cache whole blocks);
 * the remaining prefix tokens and the turn's own tokens are fresh. Differences from AIPerf: the shared
 * system prompt is the start of the first user message rather than a separate system message, and the
 * ISL is not reduced by the tokenizer's special tokens.
 *
 * Every random choice comes from a stream keyed by (`randomSeed`, purpose), so the same options and
 * seed give the same dataset, and e.g. changing the turn count does not change the prefix choices.
 */
import { type SeededRandom, samplePositiveInt, seededRandom } from './random.js';
import {
  type ResolvedSyntheticOptions,
  resolveSyntheticOptions,
  type SeqDistEntry,
  type SyntheticDatasetOptions,
} from './synthetic-options.js';
import type { Conversation, Dataset, Turn } from './types.js';

/** First hash id of the prefix-pool range. */
export const PREFIX_POOL_ID_BASE = 1_000_000_000;
/** First hash id of the shared-system-prompt range. */
export const SHARED_SYSTEM_ID_BASE = 2_000_000_000;
/** First hash id of the per-conversation user-context range. */
export const USER_CONTEXT_ID_BASE = 3_000_000_000;

/** `Dataset.file` and `SourceRef.file` of generated data (turn `line` = 1-based conversation number). */
export const SYNTHETIC_SOURCE = '<synthetic>';

/** Prefix of generated conversation ids: `synthetic-<0-based index>`. */
export const SYNTHETIC_SESSION_PREFIX = 'synthetic-';

interface Streams {
  turns: SeededRandom;
  isl: SeededRandom;
  osl: SeededRandom;
  mixture: SeededRandom;
  delay: SeededRandom;
  prefix: SeededRandom;
}

function createStreams(seed: number): Streams {
  return {
    turns: seededRandom(seed, 'synthetic:turns'),
    isl: seededRandom(seed, 'synthetic:isl'),
    osl: seededRandom(seed, 'synthetic:osl'),
    mixture: seededRandom(seed, 'synthetic:seq-dist'),
    delay: seededRandom(seed, 'synthetic:delay'),
    prefix: seededRandom(seed, 'synthetic:prefix'),
  };
}

function pickComponent(entries: readonly SeqDistEntry[], random: SeededRandom): SeqDistEntry {
  const total = entries.reduce((sum, e) => sum + e.percent, 0);
  let point = random.float() * total;
  for (const entry of entries) {
    point -= entry.percent;
    if (point < 0) return entry;
  }
  return entries[entries.length - 1]!;
}

/** A turn's prompt tokens (without prefix) and its `maxTokens` (undefined when no OSL is configured). */
function sampleLengths(o: ResolvedSyntheticOptions, s: Streams): { isl: number; osl: number | undefined } {
  if (o.seqDist !== undefined) {
    const c = pickComponent(o.seqDist, s.mixture);
    return {
      isl: samplePositiveInt(c.isl, c.islStddev, s.isl),
      osl: samplePositiveInt(c.osl, c.oslStddev, s.osl),
    };
  }
  const isl = samplePositiveInt(o.isl, o.islStddev, s.isl);
  return { isl, osl: o.osl === undefined ? undefined : samplePositiveInt(o.osl, o.oslStddev, s.osl) };
}

function idRange(base: number, count: number): number[] {
  return Array.from({ length: count }, (_, j) => base + j);
}

/** The first turn's prefix of conversation `index`: its hash ids and its length in tokens. */
function conversationPrefix(o: ResolvedSyntheticOptions, index: number, s: Streams) {
  const b = o.blockSize;
  if (o.prefixPoolSize > 0) {
    const blocks = Math.floor(o.prefixLength / b);
    const k = s.prefix.intBelow(o.prefixPoolSize);
    return { hashIds: idRange(PREFIX_POOL_ID_BASE + k * blocks, blocks), tokens: o.prefixLength };
  }
  const sharedBlocks = Math.floor(o.sharedSystemLength / b);
  const userBlocks = Math.floor((o.sharedSystemLength + o.userContextLength) / b) - sharedBlocks;
  const hashIds = [
    ...idRange(SHARED_SYSTEM_ID_BASE, sharedBlocks),
    ...idRange(USER_CONTEXT_ID_BASE + index * userBlocks, userBlocks),
  ];
  return { hashIds, tokens: o.sharedSystemLength + o.userContextLength };
}

function buildTurn(o: ResolvedSyntheticOptions, s: Streams, conversation: number, index: number): Turn {
  const { isl, osl } = sampleLengths(o, s);
  const prefix = index === 0 ? conversationPrefix(o, conversation, s) : { hashIds: [], tokens: 0 };
  const turn: Turn = {
    index,
    prompt: {
      kind: 'synthetic',
      inputLength: prefix.tokens + isl,
      hashIds: prefix.hashIds,
      blockSize: o.blockSize,
    },
    source: { file: SYNTHETIC_SOURCE, line: conversation + 1 },
  };
  if (osl !== undefined) turn.maxTokens = osl;
  if (index > 0 && o.delayMeanMs > 0) {
    turn.delayMs = samplePositiveInt(o.delayMeanMs, o.delayStddevMs, s.delay) * o.delayRatio;
  }
  return turn;
}

/**
 * Generates the synthetic dataset.
 * @returns `numDatasetEntries` conversations; `file` is {@link SYNTHETIC_SOURCE}, nothing skipped.
 * @throws {SyntheticOptionError} for a bad option (see `resolveSyntheticOptions`).
 */
export function generateSyntheticDataset(options: SyntheticDatasetOptions): Dataset {
  const o = resolveSyntheticOptions(options);
  const streams = createStreams(o.randomSeed);
  const conversations: Conversation[] = [];
  let turnCount = 0;
  for (let i = 0; i < o.entries; i += 1) {
    const count = samplePositiveInt(o.turnsMean, o.turnsStddev, streams.turns);
    const turns = Array.from({ length: count }, (_, t) => buildTurn(o, streams, i, t));
    turnCount += count;
    conversations.push({
      id: `${SYNTHETIC_SESSION_PREFIX}${i}`,
      turns,
      contextMode: 'deltas_without_responses',
    });
  }
  return {
    conversations,
    turnCount,
    blockSize: o.blockSize,
    skipped: { beforeStartOffset: 0, afterEndOffset: 0, badLines: 0 },
    file: SYNTHETIC_SOURCE,
  };
}
