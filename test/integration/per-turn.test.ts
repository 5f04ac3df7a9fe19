/**
 * Issue #29 item 5, "Per-turn answers": a multi-turn run's summary has `per_turn` (the records by
 * `turn_index`, 10 and above in one bucket), its console a `By turn:` line and its report the
 * per-turn chart; a single-turn run has none of them. Runs through the CLI in this process against
 * one built-in simulator in this process (engine mode, prefix cache on, `cached_tokens` reported);
 * counts are checked against the records file the run wrote.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
const root = mkdtempSync(join(tmpdir(), 'tokenload-per-turn-'));
let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ warmupMs: 0 });
});
after(async () => {
  await sim.close();
  rmSync(root, { recursive: true, force: true });
});

/** The flags every run here shares: no client warm-up, no scrapes, quiet. */
const COMMON = [
  '--model',
  'Qwen/Qwen3-0.6B',
  '--random-seed',
  '7',
  '--client-warmup-ms',
  '0',
  '--no-server-metrics',
  '--ui',
  'none',
];

interface Dist {
  p50: number;
  p90: number;
  avg: number;
  count: number;
}

interface TurnEntry {
  turn_index: number;
  label: string;
  turn_index_max?: number;
  requests: number;
  errors: number;
  cache: { requests_reported: number; requests_unknown: number; hit_ratio: number | null };
  time_to_first_token?: Dist;
  request_latency?: Dist;
  usage_cached_tokens?: Dist;
}

interface RecordLine {
  metadata: { turn_index: number };
  metrics: Record<string, { value: unknown }>;
  error: unknown;
}

async function profile(name: string, args: string[]): Promise<string> {
  const dir = join(root, name);
  const r = await runCliInProcess(['profile', ...COMMON, '--url', sim.url, ...args, '--artifact-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  return dir;
}

const summaryOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Record<string, unknown>;
const consoleOf = (dir: string) => readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
const recordsOf = (dir: string): RecordLine[] =>
  readFileSync(join(dir, 'profile_export.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RecordLine);

/** Records of the file grouped by bucket label (`10+` from turn index 10): all, failed, with cached tokens. */
function countsByBucket(records: readonly RecordLine[]) {
  const out = new Map<string, { requests: number; errors: number; reported: number }>();
  for (const r of records) {
    const t = r.metadata.turn_index;
    const label = t >= 10 ? '10+' : String(t);
    const c = out.get(label) ?? { requests: 0, errors: 0, reported: 0 };
    c.requests++;
    if (r.error !== null) c.errors++;
    else if (r.metrics.usage_cached_tokens !== undefined) c.reported++;
    out.set(label, c);
  }
  return out;
}

function turnsOf(dir: string): TurnEntry[] {
  const section = summaryOf(dir).per_turn as { bucket_cap: number; turns: TurnEntry[] } | undefined;
  assert.ok(section, 'per_turn present');
  assert.equal(section.bucket_cap, 10);
  return section.turns;
}

test('Bailian multi-turn replay: per_turn counts are the records by turn index, later turns hit the prefix cache, the report charts it', async () => {
  const dir = await profile('bailian', [
    '--streaming',
    '--input-file',
    TRACE,
    '--custom-dataset-type',
    'bailian_trace',
    '--synthesis-speedup-ratio',
    '200',
    '--synthesis-max-osl',
    '16',
  ]);
  const records = recordsOf(dir);
  const turns = turnsOf(dir);
  const byBucket = countsByBucket(records);
  assert.ok(byBucket.size >= 3, `turn indexes ${[...byBucket.keys()]}`);
  assert.deepEqual(
    turns.map((t) => t.label),
    [...byBucket.keys()].sort((a, b) => Number(a) - Number(b)),
  );
  assert.equal(
    turns.reduce((n, t) => n + t.requests, 0),
    records.length,
  );
  for (const t of turns) {
    const c = byBucket.get(t.label);
    assert.deepEqual(
      { requests: t.requests, errors: t.errors, reported: t.cache.requests_reported },
      c && { requests: c.requests, errors: c.errors, reported: c.reported },
      t.label,
    );
    assert.equal(t.time_to_first_token?.count, t.requests - t.errors, `TTFT of turn ${t.label}`);
  }
  // A later turn resends its conversation: more of its prompt is cached than a first turn's.
  const [first, second] = turns as [TurnEntry, TurnEntry];
  assert.ok(
    (second.cache.hit_ratio ?? 0) > (first.cache.hit_ratio ?? 1),
    JSON.stringify([first.cache, second.cache]),
  );
  assert.ok((second.usage_cached_tokens?.avg ?? 0) > (first.usage_cached_tokens?.avg ?? Infinity));

  assert.match(
    consoleOf(dir),
    /^By turn: TTFT p50 turn 0 [\d.]+ ms, 1 [\d.]+ ms, .*cached tokens [\d.]+ % at turn 0 → [\d.]+ % at later turns/m,
  );

  // The run wrote its report.
  const html = readFileSync(join(dir, 'report.html'), 'utf8');
  assert.match(html, /"id":"per-turn"/);
  assert.match(html, /TTFT and prefix-cache hits by turn/);
  assert.match(html, /By turn: TTFT p50 turn 0/);
});

test('synthetic sessions of 12 turns, not streamed: turn indexes 10 and 11 share the 10+ bucket; request latency stands for TTFT', async () => {
  const dir = await profile('synthetic', [
    '--isl',
    '32',
    '--osl',
    '4',
    '--session-turns-mean',
    '12',
    '--conversation-num',
    '2',
    '--concurrency',
    '2',
  ]);
  const records = recordsOf(dir);
  const turns = turnsOf(dir);
  assert.deepEqual(
    turns.map((t) => t.label),
    ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10+'],
  );
  const last = turns[10] as TurnEntry;
  assert.equal(last.turn_index, 10);
  assert.equal(last.turn_index_max, Math.max(...records.map((r) => r.metadata.turn_index)));
  const byBucket = countsByBucket(records);
  for (const t of turns) assert.equal(t.requests, byBucket.get(t.label)?.requests, t.label);
  for (const t of turns) assert.equal(t.time_to_first_token, undefined);
  assert.match(
    consoleOf(dir),
    /^By turn: request latency p50 turn 0 [\d.]+ ms, 1 [\d.]+ ms, 2 [\d.]+ ms, …, 10\+ [\d.]+ ms;/m,
  );
});

test('a single-turn run has no per_turn section and no By turn line', async () => {
  const dir = await profile('single', ['--streaming', '--isl', '32', '--osl', '4', '--request-count', '3']);
  assert.ok(recordsOf(dir).every((r) => r.metadata.turn_index === 0));
  assert.equal(summaryOf(dir).per_turn, undefined);
  assert.doesNotMatch(consoleOf(dir), /By turn/);
});
