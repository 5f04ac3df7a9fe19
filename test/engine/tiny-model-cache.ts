/**
 * The tiny Qwen3 GGUF (tiny-qwen3.ts) written once into the tests' cache folder and reused by later
 * runs: `npm test` writes it in its set-up step (test/setup.ts), and the real-engine test writes it
 * on demand when it runs alone. The file name carries a hash of what the model is made from (the
 * writer's sources, the bundled tokenizer, the seed and the shape), so a change to any of them makes
 * a new file (and removes the old one).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCached, PROJECT_ROOT, TEST_CACHE } from '../helpers/test-cache.js';
import { TINY_SHAPE, type TinyModelFile, type TinyModelShape, writeTinyQwen3 } from './tiny-qwen3.js';

/** The seed of the real-engine test's model (weights are a pure function of seed and tensor name). */
export const ENGINE_TEST_SEED = 1;

/** What the model file is made from, relative to the project root (the tokenizer folder is read whole). */
const WRITER_SOURCES = ['test/engine/tiny-qwen3.ts', 'test/engine/gguf-writer.ts'];
const TOKENIZER_DIR = 'assets/tokenizers/qwen3';

/** A hash of the writer's sources, the bundled tokenizer's files, `seed` and `shape`. */
function modelKey(seed: number, shape: TinyModelShape): string {
  const hash = createHash('sha256').update(JSON.stringify({ seed, shape }));
  const tokenizer = readdirSync(join(PROJECT_ROOT, TOKENIZER_DIR))
    .sort()
    .map((f) => join(TOKENIZER_DIR, f));
  for (const file of [...WRITER_SOURCES, ...tokenizer]) {
    hash.update(file).update(readFileSync(join(PROJECT_ROOT, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The tiny Qwen3 GGUF of `seed` and `shape` in the tests' cache folder, written there first if it is
 * not yet (atomically: a file under its final name is always whole).
 */
export function cachedTinyQwen3(seed: number, shape: TinyModelShape = TINY_SHAPE): TinyModelFile {
  const base = join(TEST_CACHE, `tiny-qwen3-${modelKey(seed, shape)}`);
  const facts = `${base}.json`;
  ensureCached(
    'tiny-qwen3',
    () => existsSync(facts),
    () => {
      for (const old of readdirSync(TEST_CACHE).filter((f) => f.startsWith('tiny-qwen3-'))) {
        rmSync(join(TEST_CACHE, old), { force: true });
      }
      const written = writeTinyQwen3(`${base}.gguf.partial`, seed, shape);
      renameSync(written.path, `${base}.gguf`);
      writeFileSync(facts, JSON.stringify({ ...written, path: `${base}.gguf` }));
    },
  );
  return JSON.parse(readFileSync(facts, 'utf8')) as TinyModelFile;
}
