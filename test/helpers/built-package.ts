/**
 * The built package (`dist/src`, which `bin/tokenload.js` and `import('tokenload')` load), made
 * current on demand. `npm test` builds before any test starts, so under it this only checks; a test
 * file run alone after a change to `src/` (or in a clone never built) builds first, once, however
 * many files run.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ensureCached, PROJECT_ROOT } from './test-cache.js';

/** The built CLI, as a user runs it: `node bin/tokenload.js …`. */
const BIN = join(PROJECT_ROOT, 'bin', 'tokenload.js');
/** The build's configuration files: a change to one makes the build out of date. */
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];

/** Every file under `dir` with its modification time (ms), by path relative to `dir`. */
function filesUnder(dir: string): Map<string, number> {
  const files = new Map<string, number>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile()) files.set(relative(dir, path), statSync(path).mtimeMs);
  }
  return files;
}

/**
 * Whether `dist/src` was built from the current sources: newer than every file of `src/` and the
 * build configuration, and holding a `.js` file for each `.ts` source and none for a source that is
 * gone (a moved or deleted module would otherwise stay in the package).
 */
function buildIsCurrent(): boolean {
  let built: Map<string, number>;
  try {
    built = filesUnder(join(PROJECT_ROOT, 'dist', 'src'));
  } catch {
    return false;
  }
  const sources = filesUnder(join(PROJECT_ROOT, 'src'));
  const configs = CONFIGS.map((f) => statSync(join(PROJECT_ROOT, f)).mtimeMs);
  const newestSource = Math.max(...sources.values(), ...configs);
  const js = [...built.keys()].filter((f) => f.endsWith('.js'));
  const ts = [...sources.keys()].filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  return (
    js.length === ts.length && ts.every((f) => (built.get(f.replace(/\.ts$/, '.js')) ?? 0) >= newestSource)
  );
}

/** Runs `npm run build` in the project root; its output is shown only when it fails. */
function build(): void {
  process.stderr.write('dist/ is missing or older than src/: npm run build\n');
  const npm = process.env.npm_execpath;
  const [command, args] =
    npm === undefined ? ['npm', ['run', 'build']] : [process.execPath, [npm, 'run', 'build']];
  try {
    execFileSync(command, args, { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`npm run build failed:\n${stdout?.toString() ?? ''}${stderr?.toString() ?? ''}`);
  }
}

/** Makes sure `dist/` is built from the current `src/` (builds it if not). */
export function ensureBuilt(): void {
  ensureCached('build', buildIsCurrent, build);
}

/** The absolute path of the built CLI (`bin/tokenload.js`) for `node`, after {@link ensureBuilt}. */
export function builtCli(): string {
  ensureBuilt();
  return BIN;
}
