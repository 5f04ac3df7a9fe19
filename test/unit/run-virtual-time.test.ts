/**
 * Cancellation (`--request-cancellation-rate/--request-cancellation-delay`), the duration cut-off
 * (`--benchmark-duration` + `--benchmark-grace-period`) and the Ctrl-C grace period, run through the
 * profiling phase the run uses, in virtual time: the records file says which requests were
 * cancelled and when, and when issuing stopped.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textConversations, type VirtualRecord, virtualPhase } from '../helpers/virtual-phase.js';

/** Response times by conversation: short, medium and longer than any grace period below, ms. */
const SERVER_MS: Record<string, number> = { c0: 400, c1: 650, c2: 2000, c3: 400, c4: 650, c5: 2000 };
const serverMs = (id: string): number => SERVER_MS[id] ?? Number.NaN;

/** Splits the records around a moment: those in flight at it, and the rest. */
function inFlightAt(records: VirtualRecord[], atMs: number): VirtualRecord[] {
  return records.filter((r) => r.startMs < atMs && r.endMs > atMs);
}

test('--request-cancellation-rate: picked requests are cancelled exactly --request-cancellation-delay after they were sent, reproducibly by seed', async () => {
  const run = (seed: number, pct: number) =>
    virtualPhase({
      config: {
        randomSeed: seed,
        concurrency: 2,
        requestCount: 40,
        requestCancellationRatePct: pct,
        requestCancellationDelaySeconds: 0.25,
      },
      conversations: textConversations(8),
      durationMs: () => 1000,
    });
  const { records } = await run(5, 30);
  assert.equal(records.length, 40);
  const cancelled = records.filter((r) => r.wasCancelled).map((r) => r.sessionNum);
  assert.ok(cancelled.length > 0 && cancelled.length < records.length, `cancelled ${cancelled.length}`);
  for (const r of records)
    assert.equal(r.endMs - r.startMs, r.wasCancelled ? 250 : 1000, `session ${r.sessionNum}`);
  const again = await run(5, 30);
  assert.deepEqual(
    again.records.filter((r) => r.wasCancelled).map((r) => r.sessionNum),
    cancelled,
  );
  const otherSeed = await run(6, 30);
  assert.notDeepEqual(
    otherSeed.records.filter((r) => r.wasCancelled).map((r) => r.sessionNum),
    cancelled,
  );
  const all = await run(5, 100);
  assert.ok(all.records.every((r) => r.wasCancelled && r.endMs - r.startMs === 250));
});

test('--benchmark-duration: issuing stops at the duration; in-flight requests get the grace period, then are cancelled at its end', async () => {
  const durationMs = 1000;
  const graceMs = 500;
  const { result, records } = await virtualPhase({
    config: {
      concurrency: 3,
      benchmarkDurationSeconds: durationMs / 1000,
      gracePeriodSeconds: graceMs / 1000,
    },
    conversations: textConversations(6),
    durationMs: serverMs,
  });
  assert.equal(result.load.issued, records.length);
  // Closed loop until the cut-off: every slot freed before it took the next request at once …
  for (const r of records.filter((x) => x.endMs < durationMs))
    assert.ok(
      records.some((x) => x.startMs === r.endMs),
      `nothing sent when session ${r.sessionNum} ended`,
    );
  // … and nothing was sent from the cut-off on, though slots freed during the grace period.
  assert.ok(records.every((r) => r.startMs < durationMs));
  const atCutoff = inFlightAt(records, durationMs);
  const cancelled = atCutoff.filter((r) => r.wasCancelled);
  assert.ok(cancelled.length > 0 && cancelled.length < atCutoff.length, 'both outcomes occur');
  for (const r of cancelled) {
    assert.equal(r.endMs, durationMs + graceMs);
    assert.ok(r.startMs + serverMs(r.conversationId) > durationMs + graceMs);
  }
  for (const r of records.filter((x) => !x.wasCancelled))
    assert.equal(r.endMs - r.startMs, serverMs(r.conversationId));
  assert.ok(records.every((r) => !r.wasCancelled || atCutoff.includes(r)));
  assert.deepEqual(result.cutoff, {
    inFlightAtCutoff: atCutoff.length,
    completedInGrace: atCutoff.length - cancelled.length,
    cancelledAfterGrace: cancelled.length,
  });
});

test('Ctrl-C: no request is sent after the stop; those in flight get --benchmark-grace-period, then are cancelled', async () => {
  const stopMs = 1000;
  const graceMs = 500;
  const { result, records } = await virtualPhase({
    config: { concurrency: 3, requestCount: 100, gracePeriodSeconds: graceMs / 1000 },
    conversations: textConversations(6),
    durationMs: serverMs,
    stopAtMs: stopMs,
  });
  assert.equal(result.interrupted, true);
  assert.equal(result.cutoff, null);
  assert.ok(records.every((r) => r.startMs < stopMs));
  const atStop = inFlightAt(records, stopMs);
  const cancelled = atStop.filter((r) => r.wasCancelled);
  assert.ok(cancelled.length > 0 && cancelled.length < atStop.length, 'both outcomes occur');
  for (const r of cancelled) assert.equal(r.endMs, stopMs + graceMs);
  for (const r of records.filter((x) => !x.wasCancelled))
    assert.equal(r.endMs - r.startMs, serverMs(r.conversationId));
  assert.ok(records.every((r) => !r.wasCancelled || atStop.includes(r)));
});
