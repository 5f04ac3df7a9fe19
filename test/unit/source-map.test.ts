/**
 * docs/source-map.md names every folder of `src/`, and only folders that exist: each row's first
 * cell names one folder as `src/NAME/`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

const ROOT = PROJECT_ROOT;

/** The folders the map's table rows name, in their order. */
function mappedFolders(map: string): string[] {
  return [...map.matchAll(/^\| \[?`src\/([a-z0-9-]+)\/`/gm)].map((m) => m[1] as string);
}

test('the source map names each folder of src/ once, and no other', () => {
  const map = readFileSync(join(ROOT, 'docs', 'source-map.md'), 'utf8');
  const mapped = mappedFolders(map);
  const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  const problems = [
    ...folders
      .filter((f) => !mapped.includes(f))
      .map((f) => `src/${f}/ is missing from docs/source-map.md: add a row saying what it holds`),
    ...mapped
      .filter((f) => !folders.includes(f))
      .map((f) => `docs/source-map.md names src/${f}/, which does not exist: remove or rename its row`),
    ...mapped
      .filter((f, i) => mapped.indexOf(f) !== i)
      .map((f) => `docs/source-map.md names src/${f}/ twice`),
  ];
  assert.deepEqual(problems, []);
});

test('a map row is read from its first cell only', () => {
  assert.deepEqual(
    mappedFolders(
      '| folder | holds |\n|---|---|\n| [`src/cli/`](../src/cli/) | calls `src/run/` |\n| `src/run/` | runs |\n',
    ),
    ['cli', 'run'],
  );
});
