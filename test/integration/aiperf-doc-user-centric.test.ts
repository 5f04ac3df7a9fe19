/**
 * AIPerf's docs/tutorials/user-centric-timing.md, its "High Throughput Cache Test" run with `aiperf`
 * replaced by `tokenload` against the simulator (its 100 s cut to 5 s): 15 users at 4 requests/s
 * send 20 requests in 5 s, the users' first turns are scheduled 0.25 s apart, and a user's next turn
 * 3.75 s (15 / 4.0) after its previous one.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runDocCommand } from '../helpers/aiperf-doc-run.js';

interface Summary {
  request_count: { avg: number };
  load: { strategy: string };
  users: { opening: number; turn_gap_s: number };
}

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 1, tokenizer: 'builtin' });
});
after(() => sim.close());

test('user-centric-timing.md "High Throughput Cache Test" (100 s cut to 5 s): 20 requests, turns 3.75 s apart per user', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model Qwen/Qwen3-0.6B \\
    --url localhost:8000 \\
    --endpoint-type chat \\
    --streaming \\
    --user-centric-rate 4.0 \\
    --num-users 15 \\
    --session-turns-mean 20 \\
    --shared-system-prompt-length 1000 \\
    --user-context-prompt-length 20000 \\
    --synthetic-input-tokens-mean 26 \\
    --osl 100 \\
    --num-dataset-entries 1000 \\
    --benchmark-duration 5`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { records, summary } = run.artifacts;
  assert.equal(summary.load.strategy, 'user_centric');
  assert.deepEqual(summary.users, { opening: 15, started: 15, turn_gap_s: 3.75 });
  assert.equal(records.length, 20);
  assert.equal(summary.request_count.avg, 20);
  const scheduled = (r: (typeof records)[number]): bigint =>
    BigInt(r.metadata.request_scheduled_ns as string);
  const [t0 = 0n] = records.map(scheduled).sort((a, b) => Number(a - b));
  // In ms from the first: exact to the ns the epoch conversion rounds to.
  const ms = (ns: bigint): number => Math.round(Number(ns - t0) / 1e3) / 1e3;
  const firsts = records.filter((r) => r.metadata.turn_index === 0).map((r) => ms(scheduled(r)));
  assert.deepEqual(
    firsts.sort((a, b) => a - b),
    Array.from({ length: 15 }, (_, i) => i * 250),
  );
  // Each user's turns in order: when each was due, and when its answer ended (ms from the first).
  const bySession = new Map<unknown, Array<{ dueMs: number; endMs: number }>>();
  for (const r of records) {
    const turns = bySession.get(r.metadata.session_num) ?? [];
    turns.push({ dueMs: ms(scheduled(r)), endMs: ms(BigInt(r.metadata.request_end_ns as string)) });
    bySession.set(r.metadata.session_num, turns);
  }
  let seconds = 0;
  for (const turns of bySession.values()) {
    turns.sort((a, b) => a.dueMs - b.dueMs);
    for (let k = 1; k < turns.length; k++) {
      const [prev, next] = [turns[k - 1], turns[k]] as [{ dueMs: number; endMs: number }, { dueMs: number }];
      seconds++;
      // 3.75 s after the previous turn was due; at its answer's end when that came later.
      if (prev.endMs <= prev.dueMs + 3750) assert.equal(next.dueMs - prev.dueMs, 3750);
      else assert.ok(next.dueMs >= prev.endMs, `a turn due before the previous answer ended`);
    }
  }
  assert.ok(seconds > 0, 'some users sent a second turn');
});

test('--user-centric-rate without --num-users, or with --request-rate, is refused before anything runs', async () => {
  for (const [extra, message] of [
    ['', /--user-centric-rate requires --num-users/],
    ['--num-users 4 --request-rate 2', /--user-centric-rate cannot be combined with --request-rate/],
  ] as const) {
    const run = await runDocCommand(
      `aiperf profile --model your-model --url localhost:8000 --streaming --user-centric-rate 1.0 --session-turns-mean 3 --request-count 4 ${extra}`,
      sim.url,
    ).catch((err: Error) => err);
    assert.ok(run instanceof Error, 'no run folder is written');
    assert.match(run.message, /exit 2/);
    assert.match(run.message, message);
  }
});
