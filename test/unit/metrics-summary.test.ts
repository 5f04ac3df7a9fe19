import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { renderConsole } from '../../src/export/console-table.js';
import { GoodputParseError, meetsSlos, parseGoodput } from '../../src/metrics/goodput.js';
import { percentileConfidence } from '../../src/metrics/percentile-ci.js';
import { METRICS } from '../../src/metrics/registry.js';
import { computeStats } from '../../src/metrics/stats.js';
import { isStatsSummary, type MetricSummary, SummaryBuilder, summarize } from '../../src/metrics/summary.js';
import { SpillBudget } from '../../src/metrics/value-store.js';
import { processRecord } from '../../src/record/process.js';
import type { ProcessedRecord, RawRecord } from '../../src/record/types.js';

const MS = 1e6;
const close = (a: number | undefined, b: number): void => {
  assert.ok(a !== undefined && Math.abs(a - b) < 1e-9, `${a} ≈ ${b}`);
};

function raw(over: Partial<RawRecord>): RawRecord {
  return {
    conversationId: 'c0',
    turnIndex: 0,
    sessionNum: 0,
    xRequestId: 'r',
    xCorrelationId: 'x',
    model: 'm',
    scheduledNs: null,
    startNs: 0,
    sentNs: null,
    connectionReused: null,
    connectDurationNs: null,
    ackNs: null,
    responseStreamed: true,
    chunks: [],
    streamEndNs: null,
    endNs: 0,
    usage: null,
    finishReason: 'stop',
    inputTokens: null,
    requestedOutputTokens: null,
    httpStatus: 200,
    parseErrors: 0,
    error: null,
    cancelled: false,
    ...over,
  };
}

function ok(startMs: number, chunkMs: number[], isl: number, requested: number): ProcessedRecord {
  const chunks = chunkMs.map((t) => ({ atNs: t * MS, text: 'x', reasoning: '' }));
  const r = raw({ startNs: startMs * MS, chunks, endNs: (chunkMs.at(-1)! + 5) * MS, inputTokens: isl });
  r.requestedOutputTokens = requested;
  return processRecord(r, {
    tokenizer: null,
    useServerTokenCount: false,
    streaming: true,
    perChunkUsage: false,
  });
}

function fixture(): ProcessedRecord[] {
  const ctx = { tokenizer: null, useServerTokenCount: false, streaming: true, perChunkUsage: false };
  const error = {
    kind: 'http_status' as const,
    code: 500,
    type: 'Internal Server Error',
    message: 'boom',
    failedAtNs: 0,
  };
  return [
    ok(1000, [1100, 1200], 10, 2), // TTFT 100, OSL 2, response at 1200
    ok(1500, [1550, 1600, 1650, 1700], 30, 100), // TTFT 50, OSL 4, response at 1700, OSL mismatch
    processRecord(raw({ startNs: 1200 * MS, endNs: 1900 * MS, error, inputTokens: 20 }), ctx),
    processRecord(raw({ startNs: 1300 * MS, endNs: 1400 * MS, cancelled: true }), ctx),
  ];
}

function avg(m: MetricSummary | undefined): number | undefined {
  return m?.avg;
}

test('throughputs divide by the window max(response) − min(start) over valid records (AIPerf)', () => {
  const s = summarize(fixture());
  // window over the two valid records: earliest start 1000 ms, latest response 1700 ms → 0.7 s
  // (the failed record ending at 1900 ms does not stretch it)
  close(avg(s.metrics.benchmark_duration), 0.7);
  close(avg(s.metrics.output_token_throughput), 6 / 0.7); // Σ OSL = 2 + 4
  close(avg(s.metrics.input_token_throughput), 40 / 0.7); // Σ ISL = 10 + 30 (errors excluded)
  close(avg(s.metrics.total_token_throughput), 46 / 0.7);
  close(avg(s.metrics.request_throughput), 2 / 0.7); // 2 valid records
  assert.equal(avg(s.metrics.request_count), 2);
  assert.equal(avg(s.metrics.error_request_count), 2); // 500 and the cancellation
  assert.equal(avg(s.metrics.cancelled_request_count), 1);
  assert.equal(avg(s.metrics.total_error_isl), 20);
});

test('per-record stats over valid records; list metrics flattened', () => {
  const s = summarize(fixture());
  const ttft = s.metrics.time_to_first_token;
  assert.ok(ttft !== undefined && isStatsSummary(ttft));
  assert.equal(ttft.count, 2);
  assert.equal(ttft.avg, 75); // (100 + 50)/2
  assert.equal(ttft.unit, 'ms');
  const icl = s.metrics.inter_chunk_latency;
  assert.ok(icl !== undefined && isStatsSummary(icl));
  assert.equal(icl.count, 4); // [100] + [50, 50, 50]
  assert.equal(icl.avg, 62.5); // 250/4
});

test('values kept past many store chunks: stats over all of them, values in the order added', () => {
  // 2,997 chunk gaps cross the value store's chunk boundaries (256, 768, 1,792 values) several times.
  const records = [0, 1, 2].map((k) =>
    ok(
      k * 10,
      Array.from({ length: 1000 }, (_, i) => 100 + i * (1 + k) + (i % 7) * 0.1),
      8,
      1000,
    ),
  );
  const gaps = records.flatMap((r) => r.metrics.inter_chunk_latency as number[]);
  assert.equal(gaps.length, 2997);
  const builder = new SummaryBuilder();
  for (const r of records) builder.add(r);
  const sorted = Float64Array.from(gaps).sort();
  assert.deepEqual(builder.build().metrics.inter_chunk_latency, {
    unit: 'ms',
    ...computeStats(sorted),
    ...percentileConfidence(sorted),
  });
  assert.deepEqual(builder.valuesOf('inter_chunk_latency'), gaps);
});

test('values spilled to disk in sorted runs: the summary is the in-memory one, bit for bit', () => {
  // Gaps in no order, with ties: 3 records × 999 gaps cross chunks of 256…1,024 values, spilled.
  const records = [0, 1, 2].map((k) => {
    let at = 100;
    const times = Array.from({ length: 1000 }, (_, i) => (at += 1 + ((i * 7919 * (k + 1)) % 503) * 0.37));
    return ok(k * 10, times, 8, 1000);
  });
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-spill-'));
  try {
    const spill = new SpillBudget(0, dir);
    const spilled = new SummaryBuilder({ spill });
    const inMemory = new SummaryBuilder();
    for (const r of records) {
      spilled.add(r);
      inMemory.add(r);
    }
    const summary = spilled.build();
    assert.ok(spill.runs > 1, `${spill.runs} runs spilled`);
    assert.equal(spill.spilledBytes > 0, true);
    // Nothing is left in the folder: spill files are unlinked as soon as they are opened.
    assert.deepEqual(readdirSync(dir), []);
    assert.deepEqual(summary.metrics, inMemory.build().metrics);
    // A second build reads the runs again and gives the same figures.
    assert.deepEqual(spilled.build().metrics, summary.metrics);
    assert.throws(() => spilled.valuesOf('inter_chunk_latency'), /spilled to disk/);
    spilled.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('goodput: all SLOs must hold, fraction counts errors in the denominator', () => {
  const slos = parseGoodput('time_to_first_token:60 request_latency:250');
  const s = summarize(fixture(), { slos });
  // record 1: TTFT 100 > 60 fails; record 2: TTFT 50 ≤ 60 and latency 200 ≤ 250 → good
  assert.equal(avg(s.metrics.good_request_count), 1);
  close(avg(s.metrics.goodput), 1 / 0.7);
  close(avg(s.metrics.good_request_fraction), 0.25); // 1/(2 valid + 2 errors)
  assert.equal(summarize(fixture()).metrics.goodput, undefined); // no SLOs, no goodput
});

test('parseGoodput: direction from the metric, errors for bad items, missing value fails', () => {
  assert.deepEqual(parseGoodput('time_to_first_token:300 inter_token_latency:20'), [
    { tag: 'time_to_first_token', threshold: 300, largerIsBetter: false },
    { tag: 'inter_token_latency', threshold: 20, largerIsBetter: false },
  ]);
  const [perUser] = parseGoodput('output_token_throughput_per_user:100');
  assert.equal(perUser?.largerIsBetter, true);
  assert.equal(meetsSlos({ output_token_throughput_per_user: 100 }, [perUser!]), true); // ≥
  assert.equal(meetsSlos({ output_token_throughput_per_user: 99 }, [perUser!]), false);
  assert.equal(meetsSlos({}, [perUser!]), false);
  assert.throws(() => parseGoodput('nope:1'), GoodputParseError);
  assert.throws(() => parseGoodput('time_to_first_token:abc'), GoodputParseError);
  assert.throws(() => parseGoodput('request_throughput:5'), GoodputParseError);
  assert.throws(() => parseGoodput('  '), GoodputParseError);
});

test('OSL mismatch count and warning; error summary grouped by code and type', () => {
  const s = summarize(fixture());
  // record 2: |4 − 100| = 96 > min(5 % of 100, 50) = 5; record 1: |2 − 2| = 0
  assert.equal(avg(s.metrics.osl_mismatch_count), 1);
  assert.equal(s.warnings.length, 1);
  assert.match(s.warnings[0]!, /--extra-inputs ignore_eos:true/);
  assert.deepEqual(
    s.errorSummary.map((e) => [e.code, e.type, e.count]),
    [
      [499, 'RequestCancellationError', 1],
      [500, 'Internal Server Error', 1],
    ],
  );
});

test('usage discrepancy: off the overhead learned for the layout by more than max(10 %, 8 tokens)', () => {
  const ctx = { tokenizer: null, useServerTokenCount: false, streaming: true, perChunkUsage: false };
  const chunks = [{ atNs: 10 * MS, text: 'x', reasoning: '' }];
  const rec = (prompt: number, layout = 'user×1') =>
    processRecord(
      raw({
        chunks,
        endNs: 20 * MS,
        inputTokens: 100,
        sentPromptTokens: 100,
        promptLayout: layout,
        usage: { prompt_tokens: prompt },
      }),
      ctx,
    );
  // user×1 learns 8 (the median); 118 is 10 off, exactly 10 % (not counted), 119 is 11 off (counted).
  // Two requests of another layout teach nothing and are not checked, however far off.
  const records = [108, 108, 108, 118, 119].map((p) => rec(p));
  records.push(rec(300, 'system×1 user×1'), rec(100, 'system×1 user×1'));
  const s = summarize(records);
  assert.equal(avg(s.metrics.usage_discrepancy_count), 1);
  assert.equal(s.warnings.length, 1);
  assert.equal(s.usageCheck?.template_overhead_tokens, 8);
  assert.equal(s.usageCheck?.requests_compared, 7);
  assert.equal(s.usageCheck?.requests_unchecked, 2);
  // Every request 8 over (a chat template): learned, nothing counted, no warning.
  const templated = summarize([108, 108, 108].map((p) => rec(p)));
  assert.equal(avg(templated.metrics.usage_discrepancy_count), 0);
  assert.deepEqual(templated.warnings, []);
});

test('registry keys equal tags', () => {
  for (const [key, def] of Object.entries(METRICS)) assert.equal(def.tag, key);
});

test('a reasoning-only answer cut by max tokens is valid but raises a warning', () => {
  const chunks = [
    { atNs: 1100 * MS, text: '', reasoning: 'thinking' },
    { atNs: 1200 * MS, text: '', reasoning: ' more' },
  ];
  const r = raw({ startNs: 1000 * MS, chunks, endNs: 1300 * MS, finishReason: 'length', inputTokens: 5 });
  const rec = processRecord(r, {
    tokenizer: null,
    useServerTokenCount: false,
    streaming: true,
    perChunkUsage: false,
  });
  assert.equal(rec.valid, true);
  const s = summarize([rec]);
  assert.ok(s.warnings.some((w) => w.includes('finish_reason "length"') && w.startsWith('1 of 1')));
  assert.ok(!summarize(fixture()).warnings.some((w) => w.includes('finish_reason')));
});

/** `n` records whose TTFT (ms) is `ttft(i)`, one chunk gap of 10 ms, ISL 8. */
function ttftRecords(n: number, ttft: (i: number) => number): ProcessedRecord[] {
  return Array.from({ length: n }, (_, i) => ok(i, [i + ttft(i), i + ttft(i) + 10], 8, 2));
}

/** The console's note line under the metrics table, or undefined. */
const noteOf = (records: ProcessedRecord[]): string | undefined =>
  renderConsole({ summary: summarize(records) })
    .split('\n')
    .find((l) => l.startsWith('Note: p99'));

test('console: one note names each metric whose p99 interval is open-ended or wider than 20 % of p99', () => {
  const spread = (i: number): number => 100 + (i % 50) / 100; // 100 … 100.49 ms
  // 300 values cannot bound p99 from above (0.99^300 > 2.5 %): TTFT and latency are named, with
  // how many values rank above p99; the constant ISL, OSL and chunk gap are not.
  const open = noteOf(ttftRecords(300, spread));
  assert.ok(open !== undefined);
  assert.match(
    open,
    /Time to First Token \(3 of 300 values rank above it; 95 % interval 100\.\d\d to none ms\)/,
  );
  assert.match(open, /Request Latency \(3 of 300/);
  assert.doesNotMatch(open, /Sequence Length|Inter Chunk|Inter Token/);
  // 400 values bound it, 0.05 ms wide: no note.
  assert.equal(noteOf(ttftRecords(400, spread)), undefined);
  // 392 values of 100 ms and 8 of 1,000 ms: bounded (x_(392) to x_(400)) but 900 ms wide.
  const tail = ttftRecords(400, (i) => (i < 392 ? 100 : 1000));
  const ttft = summarize(tail).metrics.time_to_first_token;
  assert.ok(ttft !== undefined && isStatsSummary(ttft));
  assert.deepEqual(ttft.ci95?.p99, { low: 100, high: 1000 });
  assert.match(
    noteOf(tail) ?? '',
    /Time to First Token \(4 of 400 values rank above it; 95 % interval 100\.00 to 1,000\.00 ms\)/,
  );
});

test('tails counting failures: Kaplan-Meier over successes, a censored request, a failure (hand-checked)', () => {
  const ctx = { tokenizer: null, useServerTokenCount: false, streaming: true, perChunkUsage: false };
  const error = {
    kind: 'http_status' as const,
    code: 500,
    type: 'Internal Server Error',
    message: 'boom',
    failedAtNs: 0,
  };
  // Latencies 10, 20, 30, 40 ms (TTFT 5 each); one request the run ended at 25 ms, before its first
  // token; one 500. N = 6. S(10) = 5/6, S(20) = 4/6; the censored one leaves the risk set at 25 ms,
  // so S(30) = 4/6 · 2/3 = 4/9 (CDF 0.56), S(40) = 2/9 (CDF 0.78): p50 = 30, p90 and above never reached.
  const records = [10, 20, 30, 40].map((ms) => ok(0, [5, ms], 8, 2));
  const censored = raw({ endNs: 25 * MS, cancelled: true, censored: true });
  records.push(processRecord(censored, ctx), processRecord(raw({ endNs: 3 * MS, error }), ctx));
  const tails = summarize(records).tails?.section;
  assert.ok(tails !== undefined && tails !== null);
  assert.deepEqual(
    { requests: tails.requests, failed: tails.failed, cancelled: tails.cancelled, censored: tails.censored },
    { requests: 6, failed: 1, cancelled: 0, censored: 1 },
  );
  assert.deepEqual(tails.request_latency, { unit: 'ms', p50: 30, p90: null, p95: null, p99: null });
  // TTFT: four events at 5 ms of six (CDF 4/6 at 5 ms): p50 = 5, p90 beyond every success.
  assert.deepEqual(tails.time_to_first_token, { unit: 'ms', p50: 5, p90: null, p95: null, p99: null });
  // Nine successes 10 … 90 ms and one request the run ended at 5 ms: censored before every success,
  // it leaves the risk set, the successes carry all the mass, p95 = p99 = 90. Failed instead, it
  // holds 1/10 beyond every success: p95 and p99 are null.
  const nine = [10, 20, 30, 40, 50, 60, 70, 80, 90].map((ms) => ok(0, [5, ms], 8, 2));
  const early = (over: Partial<RawRecord>) =>
    processRecord(raw({ endNs: 5 * MS, cancelled: true, ...over }), ctx);
  const withCensored = summarize([...nine, early({ censored: true })]).tails?.section.request_latency;
  assert.deepEqual(withCensored, { unit: 'ms', p50: 50, p90: 90, p95: 90, p99: 90 });
  const withFailed = summarize([...nine, early({})]).tails?.section;
  assert.deepEqual(withFailed?.request_latency, { unit: 'ms', p50: 50, p90: 90, p95: null, p99: null });
  assert.equal(withFailed?.cancelled, 1);
});
