/**
 * The tests' cache folder, `node_modules/.cache/tokenload-test/` (ignored by git, gone with
 * `node_modules`): expensive set-up made once and reused by every test file and later runs. An entry
 * is created by whichever test process needs it first, under a lock, so files running in parallel
 * never build the same thing twice.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/package-root.js';

/**
 * The project root, the folder of tokenload's package.json: the same whether this file runs from
 * `test/helpers/` (through tsx) or compiled in `test-build/test/helpers/` (`npm test`). Every path
 * to a file that is not compiled (fixtures, docs, assets, examples) is made from it, never from
 * `import.meta.url`, which points into `test-build/` in the compiled tree.
 */
export const PROJECT_ROOT = packageRoot();

/** Absolute path of the cache folder. */
export const TEST_CACHE = join(PROJECT_ROOT, 'node_modules', '.cache', 'tokenload-test');

/** Blocks this thread for `ms` milliseconds (test set-up only: nothing else runs meanwhile). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Whether the process that took the lock at `lock` has gone without releasing it. */
function holderGone(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    return false; // just taken: the holder has not written its pid yet
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Makes the cache entry `name` current: when `isCurrent()` is false, runs `make()` while holding the
 * lock `<name>.lock` (a folder, created atomically); a process that finds the lock taken waits for
 * it, then checks again. A lock left by a process that died is taken over.
 */
export function ensureCached(name: string, isCurrent: () => boolean, make: () => void): void {
  if (isCurrent()) return;
  mkdirSync(TEST_CACHE, { recursive: true });
  const lock = join(TEST_CACHE, `${name}.lock`);
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (holderGone(lock)) rmSync(lock, { recursive: true, force: true });
    else sleepSync(200);
    if (isCurrent()) return;
  }
  try {
    writeFileSync(join(lock, 'pid'), String(process.pid));
    if (!isCurrent()) make();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
