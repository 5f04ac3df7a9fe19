// The compiled tree `npm test` runs: every TypeScript file of src/, test/, bench/ and scripts/ compiled
// by tsc (tsconfig.test-build.json: the type check of `npm run typecheck`, plus the output) into
// test-build/, mirroring the repository (test-build/test/unit/x.test.js imports
// test-build/src/...), with source maps, so each test file starts on plain Node (no tsx loader).
// Plain JavaScript because it runs before anything is compiled.
//
//     node test/build.mjs              clear test-build/ and compile (`npm run test:build`)
//     node test/build.mjs --if-stale   the same, only when test-build/ is missing or stale
//
// Stale: a source has no compiled file, a compiled file has no source (a moved or deleted test would
// otherwise still run), or a source or a tsconfig file is newer than the oldest compiled file. A
// failed compile leaves no test-build/ (noEmitOnError), so nothing stale is left to run either.
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'test-build');
const TREES = ['src', 'test', 'bench', 'scripts'];
const CONFIGS = ['tsconfig.json', 'tsconfig.test-build.json'];

/** Files under `dir` (relative to ROOT) whose name ends with `suffix`, with their modification times. */
function filesUnder(dir, suffix) {
  const files = new Map();
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(suffix) || entry.name.endsWith('.d.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(ROOT, path), statSync(path).mtimeMs);
  }
  return files;
}

/** Why test-build/ is not the current compile of the sources, or undefined when it is. */
function staleness() {
  let built;
  try {
    built = filesUnder('test-build', '.js');
  } catch {
    return 'test-build/ is missing';
  }
  const sources = new Map(TREES.flatMap((dir) => [...filesUnder(dir, '.ts')]));
  const newest = Math.max(...sources.values(), ...CONFIGS.map((f) => statSync(join(ROOT, f)).mtimeMs));
  const oldest = Math.min(...built.values());
  const expected = new Set([...sources.keys()].map((f) => join('test-build', f.replace(/\.ts$/, '.js'))));
  const missing = [...expected].filter((f) => !built.has(f));
  const orphans = [...built.keys()].filter((f) => !expected.has(f));
  if (missing.length > 0) return `${missing.length} source file(s) without a compiled file (${missing[0]})`;
  if (orphans.length > 0) return `${orphans.length} compiled file(s) without a source (${orphans[0]})`;
  if (newest > oldest) return 'a source or tsconfig file changed since the last compile';
  return undefined;
}

const why = process.argv.includes('--if-stale') ? staleness() : 'asked';
if (why !== undefined) {
  if (why !== 'asked') process.stderr.write(`${why}: compiling test-build/ (npm run test:build)\n`);
  rmSync(OUT, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.test-build.json')], { stdio: 'inherit' });
  } catch {
    rmSync(OUT, { recursive: true, force: true });
    process.exitCode = 1;
  }
}
