/**
 * Dataset sampling strategies (AIPerf `--dataset-sampling-strategy`): which conversation each
 * successive request (session start) uses.
 * - `sequential`: 0, 1, …, n−1, then again from 0.
 * - `random`: uniform with replacement; any conversation may repeat at any time.
 * - `shuffle`: a fresh random permutation for every pass over the dataset, so no conversation repeats
 *   within a pass.
 * Pure and seeded: the same (strategy, size, seed) always gives the same order.
 */
import { type SeededRandom, seededRandom } from './random.js';

/** The `--dataset-sampling-strategy` choices. */
export const SAMPLING_STRATEGIES = ['sequential', 'random', 'shuffle'] as const;

/** A dataset sampling strategy. */
export type SamplingStrategy = (typeof SAMPLING_STRATEGIES)[number];

/** Whether `name` is a sampling strategy. */
export function isSamplingStrategy(name: string): name is SamplingStrategy {
  return (SAMPLING_STRATEGIES as readonly string[]).includes(name);
}

/**
 * The strategy used when the user gives none (AIPerf): `random` for a `random_pool` (sampling with
 * replacement is what the format means), `shuffle` for synthetic data (no dataset type), `sequential`
 * for every file type.
 * @param datasetType the `--custom-dataset-type`, or undefined for synthetic data.
 */
export function defaultSamplingStrategy(datasetType: string | undefined): SamplingStrategy {
  if (datasetType === undefined) return 'shuffle';
  return datasetType === 'random_pool' ? 'random' : 'sequential';
}

/** An endless source of conversation indices. */
export interface ConversationSampler {
  /** Index of the conversation for the next request, in [0, conversationCount). */
  next(): number;
}

function shuffled(count: number, random: SeededRandom): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i -= 1) {
    const j = random.intBelow(i + 1);
    const tmp = order[i]!;
    order[i] = order[j]!;
    order[j] = tmp;
  }
  return order;
}

function shuffleSampler(count: number, random: SeededRandom): ConversationSampler {
  let pass: number[] = [];
  let position = 0;
  return {
    next() {
      if (position === pass.length) {
        pass = shuffled(count, random);
        position = 0;
      }
      const index = pass[position]!;
      position += 1;
      return index;
    },
  };
}

/**
 * A sampler for a dataset of `conversationCount` conversations.
 * @param seed run seed (`--random-seed`); any safe integer, 0 included. Unused by `sequential`.
 * @throws {RangeError} when `conversationCount` is not a positive safe integer (at most 2^32): a
 *   programming error, not a user's: the run always passes at least 1 (an empty dataset counts as 1).
 */
export function createConversationSampler(
  strategy: SamplingStrategy,
  conversationCount: number,
  seed: number,
): ConversationSampler {
  if (!Number.isSafeInteger(conversationCount) || conversationCount < 1 || conversationCount > 2 ** 32) {
    throw new RangeError(`conversation count must be a positive integer, got ${conversationCount}`);
  }
  const random = seededRandom(seed, `sampling:${strategy}`);
  switch (strategy) {
    case 'sequential': {
      let i = 0;
      return { next: () => i++ % conversationCount };
    }
    case 'random':
      return { next: () => random.intBelow(conversationCount) };
    case 'shuffle':
      return shuffleSampler(conversationCount, random);
  }
}

/**
 * The conversation index of each of `requestCount` requests.
 * @throws {RangeError} for a bad conversation count or a request count that is not a safe integer ≥ 0
 *   (a programming error: no flag reaches this function; the run samples through
 *   {@link createConversationSampler}).
 */
export function sampleConversationOrder(
  strategy: SamplingStrategy,
  conversationCount: number,
  requestCount: number,
  seed: number,
): number[] {
  if (!Number.isSafeInteger(requestCount) || requestCount < 0) {
    throw new RangeError(`request count must be a non-negative integer, got ${requestCount}`);
  }
  const sampler = createConversationSampler(strategy, conversationCount, seed);
  return Array.from({ length: requestCount }, () => sampler.next());
}
