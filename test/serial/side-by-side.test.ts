/**
 * `npm run bench:side-by-side` end to end at a tiny scale: the stub server and the real CLI in child
 * processes, the client's export joined with the stub's log by x-request-id. Asserts that every
 * request was found on both sides and that each figure the benchmark reports is there; no timing
 * figure is judged (a shared machine makes any threshold flaky).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { ensureBuilt } from '../helpers/built-package.js';
import { runNode } from '../helpers/run-node.js';

const BOUND_MS = 120_000;
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the benchmark and returns its JSON output. @throws when it exits non-zero. */
async function bench(args: string[]): Promise<Record<string, unknown>> {
  ensureBuilt();
  const r = await runNode(['--import', 'tsx', 'bench/side-by-side.ts', ...args], BOUND_MS);
  if (r.code !== 0) throw new Error(`bench exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const tiny = [
  '--request-count',
  '20',
  '--request-rate',
  '50',
  // The built CLI (bin/tokenload.js, as a user runs it; made current below), not the sources
  // through tsx: the same run without 1.3 s of CPU to start the loader and transform src/.
  '--cli',
  'built',
  '--pin',
  'none',
  '--stub-warmup-ms',
  '100',
  // Passed to the CLI: no client warm-up (it ran to its plateau, 4.5 s, in the fixed-schedule run).
  // A cold client's first sends are late by ms, and the 0.4 s schedule has 2 s to go out in.
  '--',
  '--client-warmup-ms',
  '0',
];

/** Every distribution the join reports for all 20 requests (tokenload exports no request_sent_ns yet). */
const FIGURES = [
  'arrivalLatenessMs',
  'startToArrivalMs',
  'scheduleLagMs',
  'ttftErrorMs',
  'firstTokenDeliveryMs',
  'stubFirstWriteLatenessMs',
];

function assertComplete(out: Record<string, unknown>): void {
  dirs.push(out.dir as string);
  assert.equal((out.client as { exitCode: number }).exitCode, 0);
  assert.deepEqual(out.requests, {
    records: 20,
    failedRecords: 0,
    stubRequests: 20,
    joined: 20,
    unmatchedRecords: 0,
    unmatchedStubRequests: 0,
    duplicateStubIds: 0,
    stubClosedEarly: 0,
    stubBackpressuredWrites: 0,
  });
  assert.equal(typeof (out.stub as { connectionsAccepted: unknown }).connectionsAccepted, 'number');
  for (const figure of FIGURES) {
    const split = out[figure] as { head: { n: number; p99: unknown }; all: { n: number } } | null;
    assert.ok(split !== null, `${figure} missing`);
    assert.equal(split.all.n, 20, figure);
    assert.equal(split.head.n, 20, `${figure}: a 0.4 s schedule is all in the first 2 s`);
    assert.equal(typeof split.head.p99, 'number', figure);
  }
  assert.equal(typeof out.achievedArrivalRatePerS, 'number');
  const cpu = out.cpu as Record<string, unknown>;
  assert.equal(typeof cpu.clientMsPerRequest, 'number');
  assert.equal(typeof cpu.stubMsPerRequest, 'number');
  assert.equal(typeof (out.clock as { stubMinusClientUs: unknown }).stubMinusClientUs, 'number');
}

test('a request-rate run is joined with the stub log request by request', async () => {
  const out = await bench(tiny);
  assertComplete(out);
  assert.match(out.command as string, /--request-rate 50 --request-count 20/);
});

test('a fixed-schedule run of a generated trace is joined the same way', async () => {
  const out = await bench([...tiny, '--fixed-schedule']);
  assertComplete(out);
  assert.match(
    out.command as string,
    /--custom-dataset-type bailian_trace --fixed-schedule --request-count 20/,
  );
});
