/**
 * `--osl` / `--osl-stddev` with an `--input-file`: a row that states no output length of its own
 * (`single_turn`, `multi_turn`, `random_pool` turns without `output_length`, Mooncake rows without
 * it) is sent with a length drawn from a normal distribution of that mean and standard deviation
 * (rounded up, at least 1; exactly the mean when the deviation is 0), as AIPerf does (source:
 * dataset/composer/base.py `_set_max_tokens`: a row's own `output_length` always wins). A verbatim
 * body (`payload`) is never changed. Draws are seeded by `--random-seed`, one per filled turn in the
 * order the turns are met, so a run is reproducible.
 */
import { samplePositiveInt, seededRandom } from './random.js';
import type { Dataset, StreamedTurn, Turn } from './types.js';

/** The `--osl` distribution of a file run. */
export interface OslFallback {
  /** `--osl`, tokens. */
  mean: number;
  /** `--osl-stddev`, tokens (0: every filled turn gets the mean). */
  stddev: number;
}

/** A function that gives each turn without an output length one drawn from `osl`. */
export function oslFiller(osl: OslFallback, randomSeed: number): (turn: Turn) => void {
  const random = seededRandom(randomSeed, 'file:osl');
  return (turn) => {
    if (turn.maxTokens !== undefined || turn.prompt.kind === 'payload') return;
    turn.maxTokens = samplePositiveInt(osl.mean, osl.stddev, random);
  };
}

/** Fills the output length of every turn of `dataset` that has none (conversation and turn order). */
export function fillDatasetOsl(dataset: Dataset, osl: OslFallback, randomSeed: number): Dataset {
  const fill = oslFiller(osl, randomSeed);
  for (const c of dataset.conversations) for (const t of c.turns) fill(t);
  return dataset;
}

/** The rows of a streamed trace, each without an output length given one, in stream order. */
export async function* fillStreamOsl(
  turns: AsyncIterable<StreamedTurn>,
  osl: OslFallback,
  randomSeed: number,
): AsyncGenerator<StreamedTurn> {
  const fill = oslFiller(osl, randomSeed);
  for await (const t of turns) {
    fill(t.turn);
    yield t;
  }
}
