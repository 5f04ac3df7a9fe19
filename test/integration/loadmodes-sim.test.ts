/**
 * Load modes end to end against the in-process simulator (fixed timing): what the simulator saw
 * (its ground-truth log: arrivals, ends, prompt tokens) and what the run measured (records and the
 * summary JSON) for --concurrency, --request-rate (+ cap), --benchmark-duration with grace, warmup
 * and synthetic input lengths. The runs that read counts, in-flight levels and cut-off accounting
 * turn the client warm-up off (up to 5 s of a busy core in a closed loop); those that read pacing,
 * schedule lag and client health keep it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import type { RunOutcome } from '../../src/run/finish.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';
import { consoleRows, htmlSummaryRows } from '../helpers/report-tables.js';

/** One ground-truth line (epoch ns as decimal strings). */
interface TruthLine {
  x_request_id: string | null;
  status: number;
  arrival_ns: string;
  end_ns: string | null;
  prompt_tokens: number;
}

/** One record line, with its `*_ns` fields read as decimal strings (they exceed 2^53). */
interface RecordLine {
  metadata: { x_request_id: string; request_scheduled_ns: string | null; was_cancelled: boolean };
  metrics: Record<string, { value: number }>;
  error: { kind: string } | null;
}

interface Run {
  outcome: RunOutcome;
  records: RecordLine[];
  truth: TruthLine[];
  summary: Record<string, unknown>;
  /** The run's report.html. */
  reportHtml: string;
}

const SILENT = { info: () => undefined, warn: () => undefined };
/** For runs whose assertions read no time the client's warm-up would change. */
const NO_CLIENT_WARMUP = { clientWarmupMs: 0 };

function baseConfig(dir: string, url: string): ProfileConfig {
  return profileConfig({
    models: ['sim-model'],
    tokenizer: 'builtin',
    url,
    streaming: true,
    synthetic: { isl: 24, osl: 4, numDatasetEntries: 20 },
    fixedScheduleAutoOffset: false,
    randomSeed: 11,
    requestTimeoutSeconds: 30,
    artifactDir: dir,
    gracePeriodSeconds: 5,
    commandLine: 'test',
  });
}

function readRecords(dir: string): RecordLine[] {
  const text = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim();
  if (text === '') return [];
  return text.split('\n').map((l) => JSON.parse(l.replace(/"(\w+_ns)":(\d+)/g, '"$1":"$2"')) as RecordLine);
}

/** Starts a simulator, runs a profile against it with `over` applied, and collects the evidence. */
async function profile(over: Partial<ProfileConfig>, sim: { ttftMs: number; itlMs: number }): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-loadmodes-'));
  const truthPath = join(dir, 'ground-truth.jsonl');
  const server = await startSimulator({ mode: 'fixed', ...sim, groundTruthLog: truthPath });
  let outcome: RunOutcome;
  try {
    const config = { ...baseConfig(join(dir, 'run'), server.url), ...over };
    outcome = await runProfile(config, { log: SILENT, stopSignal: new AbortController().signal });
  } finally {
    await server.close();
  }
  const truth = readFileSync(truthPath, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as TruthLine);
  const summary = JSON.parse(readFileSync(join(dir, 'run', 'profile_export_aiperf.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const reportHtml = readFileSync(join(dir, 'run', 'report.html'), 'utf8');
  return { outcome, records: readRecords(join(dir, 'run')), truth, summary, reportHtml };
}

/** Most requests the server had open at once (arrival to end, ends before arrivals on ties). */
function maxInFlight(truth: readonly TruthLine[]): number {
  const events: Array<[bigint, number]> = [];
  for (const t of truth) {
    events.push([BigInt(t.arrival_ns), 1]);
    if (t.end_ns !== null) events.push([BigInt(t.end_ns), -1]);
  }
  events.sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1));
  let open = 0;
  let max = 0;
  for (const [, step] of events) {
    open += step;
    max = Math.max(max, open);
  }
  return max;
}

function avg(summary: Record<string, unknown>, tag: string): number | undefined {
  return (summary[tag] as { avg?: number } | undefined)?.avg;
}

test('--concurrency 3: never more than 3 requests open on the server; request_count = --request-count', async () => {
  const run = await profile(
    { concurrency: 3, requestCount: 12, ...NO_CLIENT_WARMUP },
    { ttftMs: 5, itlMs: 2 },
  );
  assert.equal(run.records.length, 12);
  assert.equal(run.truth.length, 12);
  assert.equal(avg(run.summary, 'request_count'), 12);
  for (const r of run.records) assert.equal(r.error, null);
  const max = maxInFlight(run.truth);
  assert.ok(max <= 3, `server saw ${max} requests at once`);
  assert.ok(max >= 2, `closed loop of 3 never overlapped (max ${max})`);
  // No schedule, so no latency from it and no cap wait, in the records, the summary or the console.
  assert.doesNotMatch(run.outcome.consoleText, /from Schedule|Latency from the schedule/);
  for (const tag of FROM_SCHEDULE_TAGS) {
    assert.equal(run.summary[tag], undefined, tag);
    for (const r of run.records) assert.equal(r.metrics[tag], undefined, tag);
  }
});

const FROM_SCHEDULE_TAGS = [
  'time_to_first_token_from_schedule',
  'request_latency_from_schedule',
  'concurrency_wait',
] as const;

/** Mean of `xs[from, to)`. */
const meanOf = (xs: readonly number[], from: number, to: number) =>
  xs.slice(from, to).reduce((a, b) => a + b, 0) / (to - from);

/** Each record's value of `tag`, in send order (scheduled time). */
function inSendOrder(records: readonly RecordLine[], tag: string): number[] {
  return [...records]
    .sort((a, b) =>
      BigInt(a.metadata.request_scheduled_ns ?? '0') < BigInt(b.metadata.request_scheduled_ns ?? '0')
        ? -1
        : 1,
    )
    .map((r) => r.metrics[tag]?.value ?? Number.NaN);
}

/** Quartile means of `xs` (first to last). */
function quartileMeans(xs: readonly number[]): number[] {
  const q = Math.floor(xs.length / 4);
  return [0, 1, 2, 3].map((i) => meanOf(xs, i * q, i === 3 ? xs.length : (i + 1) * q));
}

test('--request-rate 20 --concurrency 1 against a 100 ms server: latency from the schedule grows, request_latency does not', async () => {
  // 50 ms to the first token, then 3 more tokens 50/3 ms apart: each request takes 100 ms, so the
  // cap of 1 serves 10/s of the 20/s asked for and the queue grows by one request every 100 ms.
  const run = await profile(
    { requestRate: 20, arrivalPattern: 'constant', concurrency: 1, requestCount: 32 },
    { ttftMs: 50, itlMs: 50 / 3 },
  );
  assert.equal(run.records.length, 32);
  for (const r of run.records) assert.equal(r.error, null);
  const pacing = run.summary.pacing as { schedule_reanchors: number; skipped_arrivals?: number };
  assert.equal(pacing.schedule_reanchors, 0, 'a wait the cap imposed is not client lateness');
  const scheduled = run.records.map((r) => BigInt(r.metadata.request_scheduled_ns ?? '0')).sort();
  for (let i = 1; i < scheduled.length; i++) {
    const gapNs = Number((scheduled[i] as bigint) - (scheduled[i - 1] as bigint));
    assert.ok(
      Math.abs(gapNs - 50e6) <= 1e3,
      `scheduled ${gapNs} ns after the previous: ticks keep their times`,
    );
  }
  const fromSchedule = quartileMeans(inSendOrder(run.records, 'request_latency_from_schedule'));
  const ttftFromSchedule = quartileMeans(inSendOrder(run.records, 'time_to_first_token_from_schedule'));
  const latency = quartileMeans(inSendOrder(run.records, 'request_latency'));
  const waits = quartileMeans(inSendOrder(run.records, 'concurrency_wait'));
  for (const series of [fromSchedule, ttftFromSchedule, waits])
    for (let i = 1; i < 4; i++) assert.ok(series[i]! > series[i - 1]!, `quartile means ${series.join(', ')}`);
  assert.ok(fromSchedule[3]! > 3 * fromSchedule[0]!, `from the schedule: ${fromSchedule.join(', ')} ms`);
  assert.ok(latency[3]! < 1.5 * latency[0]!, `request_latency grew: ${latency.join(', ')} ms`);
  assert.ok(fromSchedule[3]! > 3 * latency[3]!, `from the schedule ${fromSchedule[3]} vs ${latency[3]} ms`);
  for (const tag of FROM_SCHEDULE_TAGS) assert.equal((run.summary[tag] as { count?: number }).count, 32, tag);
  const avgOf = (tag: string) => (run.summary[tag] as { avg: number }).avg;
  assert.ok(avgOf('client_lag') < avgOf('concurrency_wait') / 10, 'client_lag holds none of the cap’s wait');
  const health = run.summary.client_health as { status: string } | undefined;
  assert.notEqual(health?.status, 'late', 'waits for the cap are not client lateness');
  const consoleText = run.outcome.consoleText;
  assert.match(consoleText, /Request Latency from Schedule/);
  assert.match(
    consoleText,
    /\nLatency from the schedule is higher: the concurrency cap \(1\) queued requests \(concurrency_wait p99 [\d,.]+ ms\)\n/,
  );
  // The report's table shows the console's rows (those that repeat another row left out), the
  // from-schedule ones included, and the same line under it.
  const repeats = new Set(['Time to First Output Token (ms)', 'Output Token Count (tokens)']);
  const rows = consoleRows(consoleText).filter((r) => !repeats.has(r[0] ?? ''));
  assert.ok(rows.some((r) => r[0] === 'Request Latency from Schedule (ms)'));
  assert.deepEqual(htmlSummaryRows(run.reportHtml), rows);
  assert.match(
    run.reportHtml,
    /Latency from the schedule is higher: the concurrency cap \(1\) queued requests/,
  );
});

test('a fixed schedule capped at 1 session: latency from the schedule and concurrency_wait in the records and summary', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-loadmodes-trace-'));
  const inputFile = join(dir, 'trace.jsonl');
  const rows = Array.from({ length: 6 }, (_, i) => ({ timestamp: i * 10, text: 'a b c', output_length: 2 }));
  writeFileSync(inputFile, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const run = await profile(
    { inputFile, customDatasetType: 'single_turn', fixedSchedule: true, concurrency: 1 },
    { ttftMs: 30, itlMs: 10 },
  );
  assert.equal(run.records.length, 6);
  for (const tag of FROM_SCHEDULE_TAGS) assert.equal((run.summary[tag] as { count?: number }).count, 6, tag);
  const waits = inSendOrder(run.records, 'concurrency_wait');
  assert.equal(waits[0], 0, 'the first start found its slot free');
  for (let i = 1; i < 6; i++) assert.ok(waits[i]! > waits[i - 1]!, `concurrency_wait ${waits.join(', ')}`);
  const gaps = inSendOrder(run.records, 'request_latency_from_schedule').map(
    (v, i) => v - (inSendOrder(run.records, 'request_latency')[i] as number),
  );
  for (let i = 0; i < 6; i++)
    assert.ok(gaps[i]! >= waits[i]!, `from the schedule holds the cap's wait (${i})`);
});

test('--request-rate 20 constant: scheduled sends 50 ms apart, achieved rate in the summary pacing', async () => {
  const run = await profile(
    { requestRate: 20, arrivalPattern: 'constant', requestCount: 6 },
    { ttftMs: 2, itlMs: 1 },
  );
  assert.equal(run.records.length, 6);
  const pacing = run.summary.pacing as { achieved_request_rate: number; schedule_reanchors: number };
  assert.ok(pacing !== undefined, 'pacing section');
  const scheduled = run.records.map((r) => BigInt(r.metadata.request_scheduled_ns ?? '0')).sort();
  for (let i = 1; i < scheduled.length; i++) {
    const gapNs = Number((scheduled[i] as bigint) - (scheduled[i - 1] as bigint));
    if (pacing.schedule_reanchors === 0) assert.ok(Math.abs(gapNs - 50e6) <= 1e3, `gap ${gapNs} ns`);
    else assert.ok(gapNs >= 50e6 - 1e3, `gap ${gapNs} ns`);
  }
  if (pacing.schedule_reanchors === 0) assert.ok(Math.abs(pacing.achieved_request_rate - 20) < 1e-6);
  assert.equal(run.outcome.achievedRatePerS, pacing.achieved_request_rate);
});

test('--request-rate with --concurrency 2 cap: at most 2 open on the server, every request sent', async () => {
  const run = await profile(
    { requestRate: 500, arrivalPattern: 'constant', concurrency: 2, requestCount: 8, ...NO_CLIENT_WARMUP },
    { ttftMs: 10, itlMs: 5 },
  );
  assert.equal(run.records.length, 8);
  assert.equal(run.truth.length, 8);
  for (const r of run.records) assert.equal(r.error, null);
  assert.ok(maxInFlight(run.truth) <= 2, `server saw ${maxInFlight(run.truth)} at once`);
});

test('--benchmark-duration with grace: cut-off accounting in duration_cutoff matches the records', async () => {
  const run = await profile(
    { concurrency: 2, benchmarkDurationSeconds: 0.2, gracePeriodSeconds: 0, ...NO_CLIENT_WARMUP },
    { ttftMs: 40, itlMs: 20 },
  );
  const cut = run.summary.duration_cutoff as {
    in_flight_at_cutoff: number;
    completed_in_grace: number;
    cancelled_after_grace: number;
  };
  assert.ok(cut !== undefined, 'duration_cutoff section');
  assert.ok(cut.in_flight_at_cutoff <= 2);
  assert.equal(cut.completed_in_grace + cut.cancelled_after_grace, cut.in_flight_at_cutoff);
  const cancelled = run.records.filter((r) => r.metadata.was_cancelled);
  assert.equal(cancelled.length, cut.cancelled_after_grace);
  for (const r of cancelled) assert.equal(r.error?.kind, 'cancelled');
  assert.ok(run.records.length >= 2);
});

test('--benchmark-duration with a long grace: requests in flight at the cut-off complete', async () => {
  const run = await profile(
    { concurrency: 2, benchmarkDurationSeconds: 0.1, gracePeriodSeconds: 30, ...NO_CLIENT_WARMUP },
    { ttftMs: 20, itlMs: 10 },
  );
  const cut = run.summary.duration_cutoff as { in_flight_at_cutoff: number; completed_in_grace: number };
  assert.equal(cut.completed_in_grace, cut.in_flight_at_cutoff);
  for (const r of run.records) assert.equal(r.error, null);
});

test('warmup: 3 warmup requests reach the server but not request_count; warmup_metrics present', async () => {
  const run = await profile(
    { concurrency: 1, warmupRequestCount: 3, requestCount: 5, ...NO_CLIENT_WARMUP },
    { ttftMs: 2, itlMs: 1 },
  );
  assert.equal(run.truth.length, 8);
  assert.equal(run.records.length, 5);
  assert.equal(avg(run.summary, 'request_count'), 5);
  const warm = run.summary.warmup_metrics as Record<string, { avg?: number }>;
  assert.ok(warm !== undefined, 'warmup_metrics section');
  assert.equal(warm.request_count?.avg, 3);
  assert.equal(run.outcome.warmupSummary !== null, true);
});

test('synthetic --seq-dist: every record ISL is one of the requested lengths and equals what the server counted', async () => {
  const run = await profile(
    {
      concurrency: 2,
      requestCount: 10,
      synthetic: { seqDist: '20,3:50;64,5:50', numDatasetEntries: 10 },
      ...NO_CLIENT_WARMUP,
    },
    { ttftMs: 2, itlMs: 1 },
  );
  const prompt = new Map(run.truth.map((t) => [t.x_request_id, t.prompt_tokens]));
  const seen = new Set<number>();
  for (const r of run.records) {
    const isl = r.metrics.input_sequence_length?.value as number;
    const osl = r.metrics.output_sequence_length?.value as number;
    assert.ok(isl === 20 || isl === 64, `ISL ${isl}`);
    assert.equal(osl, isl === 20 ? 3 : 5);
    assert.equal(prompt.get(r.metadata.x_request_id), isl);
    seen.add(isl);
  }
  assert.equal(run.records.length, 10);
  assert.equal(seen.size, 2, 'seeded draw used both lengths');
});
