/**
 * Every relative link of the repository's Markdown (README.md, docs/, bench/ and test/ READMEs, …)
 * leads somewhere: the file or folder exists, and an anchor names a heading of the file it points
 * into, by GitHub's slug rule; and every table row has its header's cells (an unescaped `|` in a
 * cell splits it). The checkers themselves are tried on documents written to fail.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  anchorsOf,
  brokenLinks,
  githubSlug,
  linksOf,
  markdownFiles,
  raggedTableRows,
} from '../helpers/markdown-links.js';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

const ROOT = PROJECT_ROOT;

test("GitHub's heading slugs: punctuation dropped, spaces to hyphens, repeats numbered", () => {
  assert.equal(githubSlug("AIPerf's options"), 'aiperfs-options');
  assert.equal(
    githubSlug('tokenload analyze-trace FILE --custom-dataset-type T'),
    'tokenload-analyze-trace-file---custom-dataset-type-t',
  );
  assert.equal(githubSlug('Engine model (mode: engine, default)'), 'engine-model-mode-engine-default');
  assert.equal(githubSlug('Prompts from hash_ids'), 'prompts-from-hash_ids');
  const anchors = anchorsOf(
    '# A\n\n## `tokenload report DIR`\n\n## Use\n\n## Use\n\n```\n# not a heading\n```\n',
  );
  assert.deepEqual([...anchors], ['a', 'tokenload-report-dir', 'use', 'use-1']);
});

test('links inside code spans and fenced blocks are not links; titles and images are read', () => {
  const links = linksOf(
    [
      'See [a](a.md "title") and ![img](pic.png), not `[b](b.md)`.',
      '```',
      '[c](c.md)',
      '```',
      '[ref]: refs.md',
    ].join('\n'),
  );
  assert.deepEqual(
    links.map((l) => [l.line, l.target]),
    [
      [1, 'a.md'],
      [1, 'pic.png'],
      [5, 'refs.md'],
    ],
  );
});

test('the checker names the file, line and link of each broken link', () => {
  const root = mkdtempSync(join(tmpdir(), 'tokenload-links-'));
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'docs', 'page.md'), '# Page\n\n## Some part\n');
  writeFileSync(
    join(root, 'README.md'),
    [
      '# Top',
      '[ok](docs/page.md#some-part) [ok too](#top) [web](https://example.com/x.md#nope) [folder](docs/)',
      '[gone](docs/gone.md)',
      '[bad anchor](docs/page.md#other-part)',
      '[self](#nowhere) [out](../elsewhere.md) [`code` text](docs/none.md)',
    ].join('\n'),
  );
  assert.deepEqual(brokenLinks(root, ['README.md', 'docs/page.md']), [
    'README.md:3: [gone](docs/gone.md): no such file or folder docs/gone.md',
    'README.md:4: [bad anchor](docs/page.md#other-part): no heading with the anchor #other-part in docs/page.md',
    'README.md:5: [self](#nowhere): no heading with the anchor #nowhere in README.md',
    'README.md:5: [out](../elsewhere.md): leads out of the repository',
    'README.md:5: [`code` text](docs/none.md): no such file or folder docs/none.md',
  ]);
});

test('every relative link of the Markdown files in the repository leads to a file and heading that exist', () => {
  const files = markdownFiles(ROOT);
  for (const expected of ['README.md', 'docs/README.md', 'docs/flags.md', 'bench/README.md'])
    assert.ok(files.includes(expected), `${expected} is among the files checked`);
  assert.deepEqual(brokenLinks(ROOT, files), [], 'broken links (file:line: link: why)');
});

test('a table row with an unescaped | has more cells than its header', () => {
  const table = [
    '| flag | value |',
    '|---|---|',
    '| `--a` | `<n\\|auto>` |',
    '| `--b` | `<n|auto>` |',
    '',
    'text',
  ];
  assert.deepEqual(raggedTableRows(table.join('\n')), ['line 4: 3 cells, the header has 2']);
});

test('every table row of the Markdown files in the repository has as many cells as its header', () => {
  const ragged = markdownFiles(ROOT).flatMap((file) =>
    raggedTableRows(readFileSync(join(ROOT, file), 'utf8')).map((row) => `${file}: ${row}`),
  );
  assert.deepEqual(ragged, []);
});
