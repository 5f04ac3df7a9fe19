/**
 * What `npm pack` puts in the package a user installs: the built library (`dist/src`), the CLI
 * (`bin/`), the bundled tokenizer (`assets/`), the sample traces (`examples/`, every one the README
 * names), the documentation (`docs/`, every page the README links to), README.md, LICENSE, NOTICE.md and
 * package.json, and every entry point package.json names;
 * nothing of `test/` or `bench/` (sources, compiled files or source maps) and no TypeScript source.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { ensureBuilt } from '../helpers/built-package.js';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

interface PackedFile {
  path: string;
}

interface PackageJson {
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, Record<string, string>>;
}

/** The file list of `npm pack --dry-run --json` (scripts off: the build is made current first). */
function packedFiles(): Set<string> {
  ensureBuilt();
  const npm = process.env.npm_execpath;
  const args = ['pack', '--dry-run', '--json', '--ignore-scripts'];
  const out =
    npm === undefined
      ? execFileSync('npm', args, { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      : execFileSync(process.execPath, [npm, ...args], {
          cwd: PROJECT_ROOT,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  const [pack] = JSON.parse(out) as Array<{ files: PackedFile[] }>;
  assert.ok(pack !== undefined, out);
  return new Set(pack.files.map((f) => f.path));
}

/** Every file under `dir` (relative to the project root, `/`-separated). */
function filesUnder(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(PROJECT_ROOT, join(e.parentPath, e.name)).split('\\').join('/'));
}

const files = packedFiles();
const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as PackageJson;

test('the package holds the built library, the CLI, the bundled tokenizer, the examples and the notices', () => {
  const top = new Set([...files].map((p) => p.split('/')[0]));
  assert.deepEqual([...top].sort(), [
    'LICENSE',
    'NOTICE.md',
    'README.md',
    'assets',
    'bin',
    'dist',
    'docs',
    'examples',
    'package.json',
  ]);
  const entries = [pkg.main, pkg.types, ...Object.values(pkg.bin), ...Object.values(pkg.exports['.'] ?? {})];
  for (const entry of entries) assert.ok(files.has(entry.replace(/^\.\//, '')), `entry point ${entry}`);
  for (const built of filesUnder('dist/src')) assert.ok(files.has(built), built);
  for (const data of [
    ...filesUnder('bin'),
    ...filesUnder('assets'),
    ...filesUnder('examples'),
    ...filesUnder('docs'),
  ]) {
    assert.ok(files.has(data), data);
  }
  assert.ok(files.has('assets/tokenizers/qwen3/tokenizer.json.gz'), 'the bundled tokenizer');
});

test('every sample file the README names is in the package', () => {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const named = new Set([...readme.matchAll(/\bexamples\/[\w./-]*\w\.\w+/g)].map((m) => m[0]));
  assert.ok(named.size > 0, 'the README names a sample trace');
  for (const path of named) assert.ok(files.has(path), `${path} (named in README.md)`);
});

test('every documentation page the README links to is in the package', () => {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const linked = new Set([...readme.matchAll(/\]\((docs\/[\w./-]+\.md)/g)].map((m) => m[1] ?? ''));
  assert.ok(linked.size > 0, 'the README links to docs/');
  for (const path of linked) assert.ok(files.has(path), `${path} (linked from README.md)`);
});

test('no test or bench file, compiled or not, and no TypeScript source is in the package', () => {
  const compiledOnly = [...files].filter((p) => p.startsWith('dist/') && !p.startsWith('dist/src/'));
  assert.deepEqual(compiledOnly, [], 'dist/ holds the library (dist/src) alone');
  const unwanted = [...files].filter(
    (p) => /(^|\/)(test|bench)\//.test(p) || (p.endsWith('.ts') && !p.endsWith('.d.ts')),
  );
  assert.deepEqual(unwanted, []);
});
