/**
 * The server's own timing joined to each request, checked against a known truth: `tokenload profile
 * --simulator` in fixed mode, whose TTFT from admission is exactly `ttft-ms` and whose decode is
 * exactly (OSL − 1) · `itl-ms`, with one request served at a time (`fixed-max-running=1`) under
 * concurrency 2, so requests wait in the server's queue. The simulator sends its timing as vLLM's
 * `metrics` or llama.cpp's `timings` (`--simulator-option server-timing=…`) and writes the same
 * instants to its ground-truth log; the run's records must carry the server's values beside the
 * client's TTFT, and the summary and console the client overhead.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type ProcessExit, runCliProcess } from '../helpers/cli-process.js';
import { type ExportedRecord, readRunArtifacts } from '../helpers/run-artifacts.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const TTFT_MS = 40;
const ITL_MS = 5;
const OSL = 4;
const REQUESTS = 6;

interface TimedRun {
  exit: ProcessExit;
  records: ExportedRecord[];
  summary: Record<string, unknown>;
  /** The simulator's ground-truth lines by the client's `X-Request-ID`. */
  truth: Map<string, Record<string, unknown>>;
  /** The request bodies the run sent (`inputs.json`). */
  bodies: Record<string, unknown>[];
}

async function profileTimed(
  shape: 'vllm' | 'llamacpp',
  extra: readonly string[],
  streaming = true,
): Promise<TimedRun> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-server-timing-'));
  dirs.push(dir);
  const log = join(dir, 'truth.jsonl');
  const exit = await runCliProcess([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--endpoint-type',
    'chat',
    ...(streaming ? ['--streaming'] : []),
    '--simulator',
    ...['--simulator-option', 'warmup-ms=0', '--simulator-option', 'mode=fixed'],
    ...['--simulator-option', `ttft-ms=${TTFT_MS}`, '--simulator-option', `itl-ms=${ITL_MS}`],
    ...['--simulator-option', 'fixed-max-running=1', '--simulator-option', `server-timing=${shape}`],
    ...['--simulator-option', `ground-truth-log=${log}`],
    ...['--isl', '50', '--osl', String(OSL), '--request-count', String(REQUESTS), '--concurrency', '2'],
    ...['--ui', 'none', '--client-warmup-ms', '0', '--artifact-dir', dir],
    ...extra,
  ]);
  assert.equal(exit.code, 0, exit.stderr);
  const { records, summary } = readRunArtifacts(dir);
  const truth = new Map<string, Record<string, unknown>>();
  for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
    const entry = JSON.parse(line) as Record<string, unknown>;
    truth.set(entry.x_request_id as string, entry);
  }
  const inputs = JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8')) as {
    data: { payloads: Record<string, unknown>[] }[];
  };
  return { exit, records, summary, truth, bodies: inputs.data.flatMap((session) => session.payloads) };
}

function value(record: ExportedRecord, tag: string): number | undefined {
  return record.metrics[tag]?.value;
}

/** ms between two of the ground truth's epoch-ns strings. */
function truthSpanMs(entry: Record<string, unknown>, from: string, to: string): number {
  return Number(BigInt(entry[to] as string) - BigInt(entry[from] as string)) / 1e6;
}

function near(actual: number | undefined, expected: number, label: string, within = 1e-6): void {
  assert.ok(
    actual !== undefined && Math.abs(actual - expected) <= within,
    `${label}: ${actual} ≠ ${expected}`,
  );
}

test('vLLM metrics: server TTFT, queue and decode as the simulator timed them, and the client overhead beside TTFT', async () => {
  const run = await profileTimed('vllm', ['--server-timing']);
  assert.equal(run.records.length, REQUESTS);
  for (const body of run.bodies)
    assert.equal(body.include_metrics, true, '--server-timing asks vLLM for its metrics');
  for (const record of run.records) {
    assert.equal(record.error, null);
    assert.equal(record.metadata.server_timing_source, 'vllm_metrics');
    const truth = run.truth.get(record.metadata.x_request_id as string);
    assert.ok(truth !== undefined, 'the simulator logged the request');
    // Fixed mode: the first token exactly ttft-ms after admission, the last (OSL − 1) · itl-ms later.
    near(value(record, 'server_ttft_ms'), TTFT_MS, 'server_ttft_ms');
    near(value(record, 'server_decode_ms'), (OSL - 1) * ITL_MS, 'server_decode_ms');
    near(value(record, 'server_mean_itl_ms'), ITL_MS, 'server_mean_itl_ms');
    // The queue wait the simulator's log shows (epoch ns, rounded to whole ns on both sides).
    const queueMs = value(record, 'server_queue_ms') as number;
    near(queueMs, truthSpanMs(truth, 'queued_ns', 'admitted_ns'), 'server_queue_ms', 1e-3);
    // The client's TTFT stays its own: it holds the server's queue and TTFT, and the overhead is
    // what is left of it beyond the server's TTFT, the queue included.
    const ttftMs = value(record, 'time_to_first_token') as number;
    const overheadMs = value(record, 'client_overhead_ms') as number;
    assert.ok(ttftMs >= queueMs + TTFT_MS, `TTFT ${ttftMs} below queue ${queueMs} + server TTFT`);
    assert.ok(
      overheadMs >= queueMs && overheadMs < ttftMs,
      `client_overhead_ms ${overheadMs}, queue ${queueMs}`,
    );
    assert.equal(value(record, 'server_prefill_ms'), undefined, 'vLLM reports no prefill time of its own');
  }
  const overhead = run.summary.client_overhead_ms as {
    unit: string;
    count: number;
    p50: number;
    p99: number;
  };
  assert.deepEqual([overhead.unit, overhead.count], ['ms', REQUESTS]);
  assert.ok(overhead.p50 <= overhead.p99);
  const queue = run.summary.server_queue_ms as { count: number };
  assert.equal(queue.count, REQUESTS);
  assert.match(run.exit.stdout, /Client Overhead \(ms\)/);
});

test('llama.cpp timings: recorded without --server-timing, prefill and cache beside the usage', async () => {
  const run = await profileTimed('llamacpp', []);
  for (const body of run.bodies) assert.equal(body.include_metrics, undefined, 'asked for nothing');
  for (const record of run.records) {
    assert.equal(record.error, null);
    assert.equal(record.metadata.server_timing_source, 'llamacpp_timings');
    near(value(record, 'server_ttft_ms'), TTFT_MS, 'server_ttft_ms');
    near(value(record, 'server_prefill_ms'), TTFT_MS, 'server_prefill_ms');
    near(value(record, 'server_decode_ms'), (OSL - 1) * ITL_MS, 'server_decode_ms');
    assert.equal(value(record, 'server_cached_tokens'), value(record, 'usage_cached_tokens'));
    assert.equal(value(record, 'server_queue_ms'), undefined, 'llama.cpp reports no queue time');
    assert.ok((value(record, 'client_overhead_ms') as number) > 0);
  }
  assert.equal((run.summary.client_overhead_ms as { count: number }).count, REQUESTS);
});

test('a whole (non-streamed) body: the server timing is recorded, no client overhead without a TTFT', async () => {
  const run = await profileTimed('vllm', ['--server-timing'], false);
  for (const record of run.records) {
    assert.equal(record.metadata.server_timing_source, 'vllm_metrics');
    near(value(record, 'server_ttft_ms'), TTFT_MS, 'server_ttft_ms');
    assert.equal(value(record, 'time_to_first_token'), undefined);
    assert.equal(value(record, 'client_overhead_ms'), undefined);
  }
  assert.equal(run.summary.client_overhead_ms, undefined);
  assert.doesNotMatch(run.exit.stdout, /Client Overhead/);
});

test('engine mode under a replay: every answer carries a usable server TTFT (a late step timer never makes it negative)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-server-timing-engine-'));
  dirs.push(dir);
  const exit = await runCliProcess([
    'profile',
    ...['-m', 'Qwen/Qwen3-0.6B', '--tokenizer', 'builtin', '--endpoint-type', 'chat', '--streaming'],
    ...['--simulator', '--simulator-option', 'warmup-ms=0', '--simulator-option', 'server-timing=vllm'],
    ...['--input-file', 'examples/traces/bailian_traceA_multiturn_head40.jsonl'],
    ...['--custom-dataset-type', 'bailian_trace', '--synthesis-speedup-ratio', '50'],
    ...['--ui', 'none', '--client-warmup-ms', '0', '--no-server-metrics', '--artifact-dir', dir],
  ]);
  assert.equal(exit.code, 0, exit.stderr);
  const { records, summary } = readRunArtifacts(dir);
  assert.equal(records.length, 40);
  for (const record of records) {
    const ttft = value(record, 'server_ttft_ms');
    assert.ok(ttft !== undefined && ttft >= 0, `server_ttft_ms ${ttft}`);
  }
  const warnings = summary.warnings as string[];
  assert.ok(!warnings.some((w) => w.includes('not a duration')), JSON.stringify(warnings));
});
