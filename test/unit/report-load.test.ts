/**
 * Reading a run back from its artifacts: epoch-ns times beyond 2^53 come out as exact relative
 * seconds, metrics and errors are typed, and a broken directory is reported by file and line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  buildRunCharts,
  errorTimelineChart,
  inFlightChart,
  throughputChart,
} from '../../src/report/charts.js';
import { readEpochNs } from '../../src/report/epoch-ns.js';
import { renderReportHtml } from '../../src/report/html.js';
import { loadRun } from '../../src/report/load-run.js';
import { RunLoadError } from '../../src/report/types.js';

const T0 = 1_795_978_732_272_263_739n;

function line(
  startOffsetNs: bigint,
  durationNs: bigint,
  extra: { error?: string; turn?: number } = {},
): string {
  const start = T0 + startOffsetNs;
  const metrics = extra.error
    ? '{"error_isl":{"value":10,"unit":"tokens"}}'
    : '{"time_to_first_token":{"value":12.5,"unit":"ms"},"inter_token_latency":{"value":2,"unit":"ms"},"request_latency":{"value":100,"unit":"ms"},"input_sequence_length":{"value":300,"unit":"tokens"},"output_sequence_length":{"value":40,"unit":"tokens"},"schedule_lag":{"value":0.5,"unit":"ms"},"usage_cached_tokens":{"value":128,"unit":"tokens"},"inter_chunk_latency":{"value":[1,2,3],"unit":"ms"}}';
  return `{"metadata":{"session_num":0,"conversation_id":"7","turn_index":${extra.turn ?? 0},"x_request_id":"r","x_correlation_id":"7","benchmark_phase":"profiling","request_type":"text","request_scheduled_ns":${start - 500_000n},"request_start_ns":${start},"request_ack_ns":${start + 1_000_000n},"request_end_ns":${start + durationNs},"was_cancelled":false},"metrics":${metrics},"error":${extra.error ?? 'null'}}`;
}

function writeRun(lines: string[], summary?: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-report-load-'));
  writeFileSync(join(dir, 'profile_export.jsonl'), `${lines.join('\n')}\n`);
  if (summary !== undefined) writeFileSync(join(dir, 'profile_export_aiperf.json'), JSON.stringify(summary));
  return dir;
}

test('epoch ns are read exactly from the text (JSON.parse would round them)', () => {
  const text = line(1n, 2n);
  assert.equal(readEpochNs(text, 'request_start_ns'), T0 + 1n);
  assert.notEqual(BigInt(Math.round(JSON.parse(text).metadata.request_start_ns)), T0 + 1n);
  assert.equal(readEpochNs('{"request_ack_ns":null}', 'request_ack_ns'), null);
  assert.equal(readEpochNs('{}', 'request_ack_ns'), null);
});

test('requests come back on a relative time axis with their metrics', async () => {
  // Completion order differs from start order: t0 is the earliest start, not the first line.
  const dir = writeRun([line(2_000_000_123n, 100_000_000n), line(0n, 50_000_000n, { turn: 1 })], {
    time_to_first_token: { unit: 'ms', avg: 12.5, min: 12.5, max: 12.5, p50: 12.5, count: 2 },
    request_count: { unit: 'requests', avg: 2 },
    input_config: { models: ['m'] },
    error_summary: [],
    warnings: ['watch out'],
    start_time: '2026-01-01T00:00:00.000Z',
  });
  const run = await loadRun(dir);
  assert.equal(run.t0Ns, T0);
  assert.equal(run.requests.length, 2);
  const [late, early] = run.requests as [
    NonNullable<(typeof run.requests)[0]>,
    NonNullable<(typeof run.requests)[0]>,
  ];
  assert.equal(early.startS, 0);
  assert.equal(late.startS, 2.000000123);
  assert.equal(late.endS, 2.100000123);
  assert.equal(early.scheduledS, -0.0005);
  assert.equal(early.ackS, 0.001);
  assert.equal(early.turnIndex, 1);
  assert.equal(late.ttftMs, 12.5);
  assert.equal(late.cachedTokens, 128);
  assert.equal(late.isl, 300);
  assert.equal(late.error, null);
  assert.deepEqual(run.summary?.warnings, ['watch out']);
  assert.equal(run.summary?.metrics.request_count?.avg, 2);
  assert.deepEqual(run.summary?.inputConfig, { models: ['m'] });
});

test('a failed request keeps its error and has no latency metrics', async () => {
  const error = '{"code":503,"type":"ServiceUnavailable","message":"busy","kind":"http"}';
  const run = await loadRun(writeRun([line(0n, 1_000n, { error })]));
  const r = run.requests[0]!;
  assert.deepEqual(r.error, { code: 503, type: 'ServiceUnavailable', message: 'busy', kind: 'http' });
  assert.equal(r.ttftMs, undefined);
  assert.equal(run.summary, null);
});

test('a directory without profile_export.jsonl is a RunLoadError naming the directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-report-empty-'));
  await assert.rejects(loadRun(dir), (err: unknown) => {
    assert.ok(err instanceof RunLoadError);
    assert.match(err.message, /no profile_export\.jsonl/);
    return true;
  });
});

test('a malformed line is reported with file and line number', async () => {
  const dir = writeRun([line(0n, 1n), '{"metadata":{}}']);
  await assert.rejects(loadRun(dir), /profile_export\.jsonl:2: not a record line/);
});

test('past the request cap: per-request points are an evenly spaced sample; bins, axis and counts stay those of every request', async () => {
  // 50 requests, every fifth failed, started out of order (the first line is not the earliest start).
  const lines = Array.from({ length: 50 }, (_, i) =>
    line(BigInt(((i * 37 + 11) % 50) * 100_000_000 + 7), BigInt(40_000_000 + i * 3_000_001), {
      ...(i % 5 === 0 ? { error: '{"code":500,"type":"Internal Server Error","message":"boom"}' } : {}),
    }),
  );
  const dir = writeRun(lines, {
    time_to_first_token: { unit: 'ms', avg: 12.5, p50: 11, p90: 12, p99: 13, count: 40 },
    input_config: { models: ['m'] },
    error_summary: [],
    warnings: [],
  });
  const full = await loadRun(dir);
  const sampled = await loadRun(dir, { requestCap: 4 });
  assert.equal(full.requests.length, 50);
  assert.ok(sampled.requests.length >= 4 && sampled.requests.length < 8, `${sampled.requests.length} kept`);
  assert.equal(sampled.t0Ns, full.t0Ns);
  assert.deepEqual([sampled.timeline?.count, sampled.timeline?.failed], [50, 10]);
  // The timeline's bins are those of the full request points, bit for bit.
  assert.deepEqual(throughputChart(full.timeline ?? []), throughputChart(full.requests));
  assert.deepEqual(inFlightChart(full.timeline ?? []), inFlightChart(full.requests));
  assert.deepEqual(errorTimelineChart(full.timeline ?? []), errorTimelineChart(full.requests));
  const binned = ['output-throughput-over-time', 'in-flight-over-time', 'errors-over-time'];
  const pick = (run: typeof full) => buildRunCharts(run).filter((c) => binned.includes(c.id));
  assert.equal(pick(full).length, 3);
  assert.deepEqual(pick(sampled), pick(full));
  // A sampled CDF says so and marks the summary's percentiles (over every request), not the sample's.
  const cdf = (run: typeof full) => JSON.stringify(buildRunCharts(run).find((c) => c.id === 'ttft-cdf'));
  assert.match(cdf(sampled), /a sample of \d of 50 requests; marks: the summary’s, over all/);
  assert.match(cdf(sampled), /"xAxis":13/);
  assert.doesNotMatch(cdf(full), /a sample of/);
  const html = renderReportHtml(sampled);
  assert.match(
    html,
    /<b>requests<\/b> 50 \(10 failed\); per-request charts drawn from an evenly spaced sample of \d/,
  );
  assert.doesNotMatch(renderReportHtml(full), /evenly spaced sample of/);
});
