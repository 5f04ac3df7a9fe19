/**
 * `tokenload search` (the built CLI, a process of its own) asked for more than any client on this
 * machine sends: 6,000 to 12,000 requests/s against the built-in simulator. The first probe finds the
 * client unable to deliver its rate, and the search stops there: exit 5, `client_limited` in
 * `search_history.json` with the rate the client did send, and, for a saturated client, a
 * `--workers` hint.
 *
 * Not serial (it was in test/serial/search-boundary.test.ts): a client short of 6,000 requests/s on
 * this machine is shorter still when other tests share the cores, so the outcome does not depend on
 * getting the CPU on time. Both warm-ups are off: the probe is judged on the rate the client sent,
 * which no warm-up brings near 6,000/s here.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { SearchHistory } from '../../src/search/history-types.js';
import { builtCli } from '../helpers/built-package.js';
import { runNode } from '../helpers/run-node.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-search-limit-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a client that cannot deliver the load stops the search: exit 5, the rate it sent, a --workers hint', async () => {
  const out = join(dir, 'saturated');
  const run = await runNode([
    builtCli(),
    'search',
    ...['-m', 'm', '--tokenizer', 'builtin', '--streaming', '--artifact-dir', out],
    ...['--simulator', '--simulator-option', 'mode=fixed', '--simulator-option', 'ttft-ms=1'],
    ...['--simulator-option', 'warmup-ms=0', '--client-warmup-ms', '0'],
    ...['--isl', '16', '--osl', '2', '--ttft-sla-ms', '60000', '--request-count', '4000'],
    ...['--search-over', 'request-rate', '--search-range', '6000,12000'],
  ]);
  assert.equal(run.code, 5, run.stderr);
  const history = JSON.parse(readFileSync(join(out, 'search_history.json'), 'utf8')) as SearchHistory;
  assert.equal(history.convergence_reason, 'client_limited');
  assert.equal(history.iterations.length, 1);
  assert.equal(history.iterations[0]?.status, 'client_limited');
  const limit = history.client_limit;
  assert.ok(limit !== null);
  assert.ok((limit.delivered_request_rate_per_s as number) < 6000);
  assert.match(
    run.stdout,
    /^no answer: probe-01: the client was \w+ at request_rate 6000 and sent [\d.]+ req\/s/m,
  );
  if (limit.status === 'saturated') assert.ok((limit.suggested_workers as number) >= 2);
});
