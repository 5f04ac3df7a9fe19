/**
 * The summary's `server_verdict` through the CLI, against a fixed-mode simulator whose capacity is
 * known exactly: `fixed-max-running` 2 and a 50 ms answer serve at most 40 requests/s, and a request
 * arriving with both slots taken waits, its TTFT holding the wait. So the truth is known:
 * - half the capacity: no queue, `ok`;
 * - a rate ramped from 0 past twice the capacity: the queue grows from when the rate crosses
 *   20/s, `overloaded`, with the onset rate near 20/s;
 * - Poisson arrivals at exactly the capacity: the backlog grows like √t (a null-recurrent queue),
 *   which a verdict reading only a linear slope could call fine; it must not be `ok`;
 * - twice the capacity behind `--concurrency 2`: the server's own queue stays empty, the backlog waits
 *   on the client (coordinated omission would hide it), and the verdict is `overloaded` all the same.
 *
 * Serial: a verdict is given only when the client delivered the load (client health not saturated,
 * and not late unless the queue dwarfs the lateness); under the parallel group's load the client can
 * be late, and the verdict is then, rightly, `unknown`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const MODEL = 'Qwen/Qwen3-0.6B';
/** 2 slots × (50 ms TTFT, then every token at once) = 40 requests/s. */
const CAPACITY_PER_S = 40;

interface Verdict {
  status: string;
  reason: string;
  since_s: number | null;
  onset_request_rate_per_s: number | null;
  queue_growth_per_s: number | null;
  evidence: string[];
}

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 50, itlMs: 0, fixedMaxRunning: 2, models: [MODEL] });
});
after(async () => {
  await sim?.close();
});

async function verdictOf(flags: string[]): Promise<{ verdict: Verdict; health: string; console: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-verdict-'));
  const exit = await runCliInProcess([
    'profile',
    '--model',
    MODEL,
    '--tokenizer',
    'builtin',
    '--streaming',
    '--osl',
    '4',
    '--isl',
    '32',
    ...flags,
    '--url',
    sim.url,
    '--artifact-dir',
    dir,
    '--ui',
    'none',
    '--no-server-metrics',
  ]);
  assert.equal(exit.code, 0, exit.stderr);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as {
    server_verdict: Verdict;
    client_health: { status: string };
  };
  return {
    verdict: summary.server_verdict,
    health: summary.client_health.status,
    console: readFileSync(join(dir, 'profile_export_console.txt'), 'utf8'),
  };
}

/**
 * A saturated client gets no server verdict (`unknown`), and a late one none unless the queue it
 * shows dwarfs the lateness: the run then says nothing about the server, and the test is skipped,
 * saying why, rather than passed.
 */
function skippedForLateClient(t: { skip: (why: string) => void }, health: string, verdict: Verdict): boolean {
  if (health !== 'late' && health !== 'saturated') return false;
  if (health === 'saturated')
    assert.equal(verdict.status, 'unknown', 'a saturated client gets no server verdict');
  if (verdict.status !== 'unknown') return false;
  t.skip(`the client was ${health} on this machine, so the run judged nothing about the server`);
  return true;
}

test('half the capacity: the server verdict is ok', async (t) => {
  const { verdict, health, console } = await verdictOf([
    '--request-rate',
    String(CAPACITY_PER_S / 2),
    '--request-count',
    '80',
  ]);
  if (skippedForLateClient(t, health, verdict)) return;
  assert.equal(verdict.status, 'ok', JSON.stringify(verdict));
  assert.match(console, /Server verdict: ok/);
});

test('a rate ramped past twice the capacity: overloaded, the queue growing from about the capacity', async (t) => {
  // 0 → 100/s over 5 s: the rate crosses 40/s at 2 s; 250 requests by 5 s.
  const { verdict, health } = await verdictOf([
    '--request-rate',
    '100',
    '--request-rate-ramp-duration',
    '5',
    '--arrival-pattern',
    'constant',
    '--request-count',
    '250',
  ]);
  if (skippedForLateClient(t, health, verdict)) return;
  assert.equal(verdict.status, 'overloaded', JSON.stringify(verdict));
  assert.ok(verdict.onset_request_rate_per_s !== null && verdict.since_s !== null);
  assert.ok(
    verdict.onset_request_rate_per_s >= 0.7 * CAPACITY_PER_S &&
      verdict.onset_request_rate_per_s <= 1.5 * CAPACITY_PER_S,
    `onset at ${verdict.onset_request_rate_per_s} req/s, capacity ${CAPACITY_PER_S}`,
  );
  assert.ok(
    verdict.since_s >= 1.2 && verdict.since_s <= 3.5,
    `onset at ${verdict.since_s} s; the rate crosses capacity at 2 s`,
  );
  assert.ok((verdict.queue_growth_per_s ?? 0) > 0);
});

test('Poisson arrivals at exactly the capacity (backlog ~ √t) are not called ok', async (t) => {
  const { verdict, health } = await verdictOf([
    '--request-rate',
    String(CAPACITY_PER_S),
    '--arrival-pattern',
    'poisson',
    '--random-seed',
    '7',
    '--request-count',
    '400',
  ]);
  if (skippedForLateClient(t, health, verdict)) return;
  assert.notEqual(verdict.status, 'ok', JSON.stringify(verdict));
});

test('twice the capacity behind a --concurrency cap: overloaded, the queue named as the client-side one', async (t) => {
  // The cap (2 sessions) keeps the server's own queue empty; the 40/s schedule's backlog waits on the client.
  const { verdict, health } = await verdictOf([
    '--request-rate',
    String(2 * CAPACITY_PER_S),
    '--arrival-pattern',
    'constant',
    '--concurrency',
    '2',
    '--request-count',
    '160',
  ]);
  if (skippedForLateClient(t, health, verdict)) return;
  assert.equal(verdict.status, 'overloaded', JSON.stringify(verdict));
  assert.match(verdict.reason, /on the client, behind its --concurrency cap/);
  assert.match(verdict.reason, /a higher --concurrency shows whether the server itself keeps up/);
  // The queue grows at about the offered rate minus the capacity: 80 − 40 = 40 requests/s.
  assert.ok(
    (verdict.queue_growth_per_s ?? 0) > 20 && (verdict.queue_growth_per_s ?? 0) < 60,
    String(verdict.queue_growth_per_s),
  );
});
