/**
 * `tokenload search --search-over concurrency` against the simulator's fixed mode with a known
 * capacity: at most N requests served at once, so a TTFT SLO between the unqueued TTFT and the
 * TTFT of a queued request passes at concurrency N and fails at N + 1. Serial: the margin between
 * the two TTFTs (100 ms against 150 ms) must not be eaten by a client stalled on a shared core,
 * and a late client stops the search (exit 5) rather than judging the server.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { SearchHistory } from '../../src/search/history-types.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-search-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const N = 3;

test('a concurrency search finds the simulator capacity N, and search_history.json has every probe', async () => {
  const out = join(dir, 'conc');
  const { code, stderr } = await runCliInProcess([
    'search',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--simulator',
    '--simulator-option',
    'mode=fixed',
    '--simulator-option',
    `fixed-max-running=${N}`,
    '--simulator-option',
    'ttft-ms=100',
    '--simulator-option',
    'itl-ms=20',
    '--osl',
    '6',
    '--isl',
    '32',
    '--streaming',
    '--request-count',
    '12',
    '--client-warmup-ms',
    '0',
    '--search-over',
    'concurrency',
    '--search-range',
    '1,8',
    '--ttft-sla-ms',
    '150',
    '--artifact-dir',
    out,
  ]);
  const history = JSON.parse(readFileSync(join(out, 'search_history.json'), 'utf8')) as SearchHistory;
  if (code === 5) {
    assert.ok(history.client_limit !== null, 'exit 5 names the client limit');
    return; // a late machine: the search stopped, as it must, before judging the server
  }
  assert.equal(code, 0, stderr);
  const folders = readdirSync(out)
    .filter((n) => /^probe-\d+$/.test(n))
    .sort();
  assert.equal(history.iterations.length, folders.length, 'one history entry per probe folder');
  assert.deepEqual(
    history.iterations.map((it) => it.folder),
    folders,
  );
  for (const it of history.iterations) {
    assert.ok(existsSync(join(out, it.folder, 'profile_export_aiperf.json')));
    assert.equal(it.variation_values.concurrency, it.load);
    assert.equal(it.slas.length, 1);
    assert.equal(it.slas[0]?.metric_tag, 'time_to_first_token');
  }
  assert.equal(history.config.swept_dim_path, 'concurrency');
  assert.equal(history.config.kind, 'int');
  assert.equal(history.config.random_seed, 42);
  assert.equal(history.boundary_summary.feasible_max?.value, N);
  assert.equal(history.boundary_summary.infeasible_min?.value, N + 1);
  assert.equal(history.boundary_summary.infeasible_min?.first_breach?.metric_tag, 'time_to_first_token');
  assert.ok(history.convergence_reason !== null);
});
