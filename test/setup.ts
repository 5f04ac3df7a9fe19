/**
 * `npm test`'s set-up step, run once before the test runner starts: makes the expensive shared
 * fixtures current in the tests' cache folder (test/helpers/test-cache.ts), so that no test file
 * spends its time on them: the build (`dist/`, for the tests of the built CLI and the package entry;
 * built only when missing or older than `src/`) and the tiny GGUF model of the real-engine test.
 * Every test that needs one of them also makes it on demand, so a test file run alone needs no set-up.
 */
import { cachedTinyQwen3, ENGINE_TEST_SEED } from './engine/tiny-model-cache.js';
import { ensureBuilt } from './helpers/built-package.js';

const started = performance.now();
ensureBuilt();
const model = cachedTinyQwen3(ENGINE_TEST_SEED);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(`test set-up (${seconds} s): dist/ built from the current src/; tiny GGUF ${model.path}`);
