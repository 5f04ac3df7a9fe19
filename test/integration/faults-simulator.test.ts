/**
 * Faults end to end: `runProfile` against a spawned simulator that injects seeded faults (429 with
 * Retry-After, 500, in-band SSE error, truncation and TCP reset after N tokens, hung requests caught
 * by a short request timeout). The simulator's ground-truth log says which fault each request got;
 * the client's records must classify each one, the summary must group them by code and type,
 * failed requests must stay out of the latency and throughput figures, and nothing is retried.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import { FaultPicker } from '../../src/simulator/faults.js';
import { parseSimulatorOptions } from '../../src/simulator/options.js';
import { spawnSimulator } from '../../src/simulator/spawn.js';

const REQUESTS = 240;
const SIM_OPTIONS = {
  mode: 'fixed' as const,
  ttftMs: 5,
  itlMs: 1,
  seed: 11,
  faultRate429: 0.08,
  faultRate500: 0.08,
  faultRateSseError: 0.08,
  faultRateTruncate: 0.08,
  faultRateReset: 0.08,
  faultRateHang: 0.04,
  faultAfterTokens: 3,
  retryAfterS: 7,
};

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function config(url: string, artifactDir: string): ProfileConfig {
  return profileConfig({
    models: ['Qwen/Qwen3-0.6B'],
    url,
    streaming: true,
    synthetic: { isl: 64, osl: 12 },
    concurrency: 8,
    requestCount: REQUESTS,
    randomSeed: 5,
    requestTimeoutSeconds: 1,
    artifactDir,
    gracePeriodSeconds: 5,
    commandLine: 'test',
    // No client warm-up: half a second of CPU a run, against a simulator of its own; nothing here is timed.
    clientWarmupMs: 0,
  });
}

interface TruthLine {
  x_request_id: string | null;
  fault: string;
  status: number;
}

interface RecordLine {
  metadata: { x_request_id: string };
  metrics: Record<string, { value: number | number[] }>;
  error: { code: number; type: string; kind: string; retry_after?: string } | null;
}

/** Client error kind each injected fault must produce (`none` → success). */
function expectedKind(t: TruthLine): string {
  if (t.fault === 'status') return `http_status:${t.status}`;
  const kinds: Record<string, string> = {
    none: 'success',
    'sse-error': 'in_band_error',
    truncate: 'stream_incomplete',
    reset: 'connection_reset',
    hang: 'timeout',
  };
  return kinds[t.fault] ?? `unexpected fault ${t.fault}`;
}

function clientKind(r: RecordLine): string {
  if (r.error === null) return 'success';
  return r.error.kind === 'http_status' ? `http_status:${r.error.code}` : r.error.kind;
}

function tally(keys: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const k of keys) out.set(k, (out.get(k) ?? 0) + 1);
  return out;
}

test('seeded simulator faults are classified one by one, grouped in error_summary, excluded from stats, never retried', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-faults-'));
  dirs.push(dir);
  const truthFile = join(dir, 'ground-truth.jsonl');
  const sim = await spawnSimulator({ ...SIM_OPTIONS, groundTruthLog: truthFile });
  let outcome: Awaited<ReturnType<typeof runProfile>>;
  try {
    const silent = { info: () => undefined, warn: () => undefined };
    outcome = await runProfile(config(sim.url, dir), {
      log: silent,
      stopSignal: new AbortController().signal,
    });
  } finally {
    await sim.close();
  }
  assert.equal(outcome.wasCancelled, false);

  const truth = readFileSync(truthFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TruthLine);
  const records = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RecordLine);

  // No retries: one server request per client record, and exactly the requested count.
  assert.equal(records.length, REQUESTS);
  assert.equal(truth.length, REQUESTS);

  // Deterministic with the seed: one draw per arrival, so the fault mix is the picker's first draws.
  const picker = new FaultPicker(parseSimulatorOptions(SIM_OPTIONS));
  const drawn = tally(Array.from({ length: REQUESTS }, () => picker.next().kind));
  assert.deepEqual(tally(truth.map((t) => t.fault)), drawn);
  for (const kind of ['status', 'sse-error', 'truncate', 'reset', 'hang', 'none'])
    assert.ok((drawn.get(kind) ?? 0) > 0, `seed draws at least one ${kind}`);

  // Each request, joined by X-Request-ID: the client classified exactly the injected fault.
  const byId = new Map(records.map((r) => [r.metadata.x_request_id, r]));
  for (const t of truth) {
    assert.ok(t.x_request_id !== null, 'client sent X-Request-ID');
    const r = byId.get(t.x_request_id);
    assert.ok(r, `record for ${t.x_request_id}`);
    const kind = clientKind(r);
    // A reset is not always seen as one: undici sometimes gets EOF ("other side closed") before the
    // RST's error surfaces (measured ~10 % on loopback); the client then reports a broken stream.
    if (t.fault === 'reset' && kind === 'stream_incomplete') continue;
    assert.equal(kind, expectedKind(t), `${t.x_request_id}: fault ${t.fault}/${t.status}`);
    if (t.status === 429) assert.equal(r.error?.retry_after, String(SIM_OPTIONS.retryAfterS));
  }

  // error_summary groups by (code, type) with the counts of the records.
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Record<
    string,
    unknown
  > & { error_summary: { code: number; type: string; count: number }[] };
  const failed = records.filter((r) => r.error !== null);
  const expectedGroups = tally(failed.map((r) => `${r.error?.code} ${r.error?.type}`));
  const groups = new Map(summary.error_summary.map((e) => [`${e.code} ${e.type}`, e.count]));
  assert.deepEqual(groups, expectedGroups);
  assert.equal(
    groups.get('429 Too Many Requests'),
    drawn.has('status') ? countStatus(truth, 429) : undefined,
  );
  assert.equal(groups.get('500 Internal Server Error'), countStatus(truth, 500));
  assert.equal(groups.get('408 TimeoutError'), drawn.get('hang'));

  // Failed requests stay out of latency statistics and output throughput.
  const ok = records.filter((r) => r.error === null);
  const metric = (tag: string): { avg: number; count?: number } =>
    summary[tag] as { avg: number; count?: number };
  assert.equal(metric('request_count').avg, ok.length);
  assert.equal(metric('error_request_count').avg, failed.length);
  assert.equal(metric('time_to_first_token').count, ok.length);
  assert.equal(metric('request_latency').count, ok.length);
  for (const r of failed) {
    assert.equal(r.metrics.time_to_first_token, undefined);
    assert.equal(r.metrics.request_latency, undefined);
    assert.equal(r.metrics.output_sequence_length, undefined);
  }
  const okOsl = ok.reduce((s, r) => s + (r.metrics.output_sequence_length?.value as number), 0);
  const duration = metric('benchmark_duration').avg;
  const throughput = metric('output_token_throughput').avg;
  assert.ok(
    Math.abs(throughput * duration - okOsl) <= 1e-6 * okOsl,
    `${throughput} × ${duration} vs ${okOsl}`,
  );
});

function countStatus(truth: TruthLine[], status: number): number {
  return truth.filter((t) => t.fault === 'status' && t.status === status).length;
}
