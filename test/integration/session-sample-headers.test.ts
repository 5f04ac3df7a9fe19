/**
 * Issue 29, items 3, 6 and 9: the session id's headers and whole-session sampling, through the built
 * CLI (in process) against one simulator that keeps every request it received (`captureRequests`).
 * One small Mooncake trace: 8 sessions of 1 to 3 rows (`session_id`) and 2 rows without one (each a
 * session of its own), seconds scaled down by `--synthesis-speedup-ratio`.
 * - Headers: every request carries its session's id as `X-Correlation-ID` and `X-Session-Affinity`
 *   (and in each `--session-header` name), the same on every turn of a session, different across
 *   sessions; the run with `--session-header` goes through the worker threads (`--workers 2`).
 * - Sampling: `--trace-session-sample-ratio 0.5` keeps whole sessions (each kept session has all its
 *   rows), the same ones on another run with the same seed and with the whole file loaded, others
 *   with another seed; two shards of the sampled run send exactly its sessions between them.
 * - `tokenload probe` sends the same headers.
 * - Refusals: a bad header name, a header tokenload owns, a ratio out of (0, 1], a sampled sharded
 *   run without a seed: exit code 2 naming the flag.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { GENERATED_SESSION_PREFIX } from '../../src/dataset/mooncake.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runBuiltCliInProcess } from '../helpers/cli-in-process.js';

const MODEL = 'Qwen/Qwen3-0.6B';
/** Rows per session (`session_id` `s-<name>`), written in turn order across sessions. */
const SESSION_ROWS: Record<string, number> = { a: 3, b: 2, c: 1, d: 2, e: 3, f: 2, g: 1, h: 2 };

let sim: RunningSimulator;
let dir: string;
let trace: string;
/** The trace's sessions, with their row counts, as a reader of the file forms them. */
let traceSessions: Map<string, number>;

function writeTrace(path: string): Map<string, number> {
  const order: Array<[string, number]> = [];
  for (const [name, n] of Object.entries(SESSION_ROWS)) for (let i = 0; i < n; i++) order.push([name, i]);
  order.sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]));
  const rows: object[] = order.map(([name, i], k) => ({
    timestamp: k * 10,
    input_length: 32,
    output_length: 4,
    hash_ids: [name.charCodeAt(0) * 10, name.charCodeAt(0) * 10 + 1 + i],
    session_id: `s-${name}`,
  }));
  rows.push({ timestamp: rows.length * 10, input_length: 32, output_length: 4 });
  rows.push({ timestamp: rows.length * 10, input_length: 32, output_length: 4 });
  writeFileSync(path, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const sessions = new Map<string, number>();
  rows.forEach((r, i) => {
    const id = (r as { session_id?: string }).session_id ?? `${GENERATED_SESSION_PREFIX}${i + 1}`;
    sessions.set(id, (sessions.get(id) ?? 0) + 1);
  });
  return sessions;
}

before(async () => {
  sim = await startSimulator(
    { mode: 'fixed', ttftMs: 1, itlMs: 0, models: [MODEL] },
    { captureRequests: true },
  );
  dir = mkdtempSync(join(tmpdir(), 'tokenload-sample-'));
  trace = join(dir, 'trace.jsonl');
  traceSessions = writeTrace(trace);
});

after(async () => {
  await sim?.close();
});

interface RecordMeta {
  conversation_id: string;
  turn_index: number;
  x_request_id: string;
  x_correlation_id: string;
}

interface Run {
  code: number;
  stderr: string;
  records: RecordMeta[];
  summary: { input_rows_skipped?: { session_sample?: Record<string, number> } };
}

let runs = 0;

async function profile(args: readonly string[]): Promise<Run> {
  runs += 1;
  const out = join(dir, `run${runs}`);
  const r = await runBuiltCliInProcess([
    ...['profile', '-m', MODEL, '--url', sim.url, '--tokenizer', 'builtin'],
    ...['--input-file', trace, '--custom-dataset-type', 'mooncake_trace', '--isl-block-size', '16'],
    ...['--synthesis-speedup-ratio', '10', '--client-warmup-ms', '0', '--ui', 'none', '--no-server-metrics'],
    ...['--artifact-dir', out, ...args],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const records = readFileSync(join(out, 'profile_export.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { metadata: RecordMeta }).metadata);
  const summary = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8')) as Run['summary'];
  return { ...r, records, summary };
}

/** The headers the simulator received with each of the run's requests, by `x-request-id`. */
function headersOf(run: Run): Map<string, Record<string, string | string[] | undefined>> {
  const ids = new Set(run.records.map((r) => r.x_request_id));
  const out = new Map<string, Record<string, string | string[] | undefined>>();
  for (const c of sim.capturedRequests()) {
    const id = c.headers['x-request-id'];
    if (typeof id === 'string' && ids.has(id)) out.set(id, c.headers);
  }
  assert.equal(out.size, run.records.length, 'every record has its captured request');
  return out;
}

/** Checks that each header of `names` carries the session id: one per session, distinct across sessions. */
function assertSessionHeaders(run: Run, names: readonly string[]): void {
  const received = headersOf(run);
  const idOf = new Map<string, string>();
  for (const r of run.records) {
    const h = received.get(r.x_request_id) ?? {};
    for (const name of names) assert.equal(h[name], r.x_correlation_id, `${name} of ${r.x_request_id}`);
    const seen = idOf.get(r.conversation_id);
    if (seen === undefined) idOf.set(r.conversation_id, r.x_correlation_id);
    else assert.equal(r.x_correlation_id, seen, `turn ${r.turn_index} of ${r.conversation_id}`);
  }
  assert.equal(idOf.size, traceSessions.size, 'every session of the trace was sent');
  assert.equal(new Set(idOf.values()).size, idOf.size, 'each session has its own id');
  const turns = run.records.filter((r) => r.turn_index === 1).length;
  assert.ok(turns > 0, 'some session has a second turn');
}

/** The records' sessions with their request counts. */
function sessionsOf(run: Run): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of run.records) out.set(r.conversation_id, (out.get(r.conversation_id) ?? 0) + 1);
  return out;
}

const keys = (m: Map<string, number>): string[] => [...m.keys()].sort();

test('X-Correlation-ID and X-Session-Affinity carry the session id on every turn; --session-header adds its names, through the worker threads too', async () => {
  assertSessionHeaders(await profile([]), ['x-correlation-id', 'x-session-affinity']);
  const named = await profile([
    '--session-header',
    'X-Session-ID',
    '--session-header',
    'x-route-key',
    '--workers',
    '2',
  ]);
  assertSessionHeaders(named, ['x-correlation-id', 'x-session-affinity', 'x-session-id', 'x-route-key']);
});

test('tokenload probe sends its session ids in the same headers, --session-header included', async () => {
  const before = sim.capturedRequests().length;
  const r = await runBuiltCliInProcess([
    ...['probe', '-m', MODEL, '--url', sim.url, '--tokenizer', 'builtin'],
    ...['--keep-alive-idle-seconds', '0', '--session-header', 'X-Session-ID'],
  ]);
  assert.equal(r.code, 0, r.stderr);
  // Generation requests carry ids; the probe's other routes (tokenize) do not.
  const sent = sim
    .capturedRequests()
    .slice(before)
    .filter((c) => c.headers['x-request-id'] !== undefined);
  assert.ok(sent.length > 0, 'the probe sent generation requests');
  for (const { headers: h } of sent) {
    assert.match(String(h['x-correlation-id']), /^probe-/);
    assert.equal(h['x-session-affinity'], h['x-correlation-id']);
    assert.equal(h['x-session-id'], h['x-correlation-id']);
  }
});

test('--trace-session-sample-ratio 0.5 keeps whole sessions, by the seed, the same streamed and loaded whole', async () => {
  const sample = ['--trace-session-sample-ratio', '0.5'];
  const first = await profile([...sample, '--random-seed', '1']);
  const kept = sessionsOf(first);
  assert.ok(kept.size > 0 && kept.size < traceSessions.size, `kept ${kept.size} of ${traceSessions.size}`);
  for (const [id, n] of kept) assert.equal(n, traceSessions.get(id), `every row of kept session ${id}`);
  const rowsKept = [...kept.values()].reduce((a, b) => a + b, 0);
  assert.deepEqual(first.summary.input_rows_skipped?.session_sample, {
    ratio: 0.5,
    seed: 1,
    sessions_read: traceSessions.size,
    sessions_kept: kept.size,
    rows_read: [...traceSessions.values()].reduce((a, b) => a + b, 0),
    rows_kept: rowsKept,
  });
  assert.match(first.stderr, new RegExp(`kept ${kept.size} of ${traceSessions.size} sessions`));

  const again = await profile([...sample, '--random-seed', '1']);
  assert.deepEqual(keys(sessionsOf(again)), keys(kept), 'the same seed keeps the same sessions');
  const whole = await profile([...sample, '--random-seed', '1', '--no-trace-streaming']);
  assert.deepEqual([...sessionsOf(whole)].sort(), [...kept].sort(), 'the whole-file load keeps the same');
  assert.deepEqual(
    whole.summary.input_rows_skipped?.session_sample,
    first.summary.input_rows_skipped?.session_sample,
  );
  const other = await profile([...sample, '--random-seed', '2']);
  assert.notDeepEqual(keys(sessionsOf(other)), keys(kept), 'another seed keeps other sessions');
  for (const [id, n] of sessionsOf(other)) assert.equal(n, traceSessions.get(id), `every row of ${id}`);
});

test('two shards of a sampled run send exactly its sessions between them, each session in one shard', async () => {
  const sample = ['--trace-session-sample-ratio', '0.5', '--random-seed', '1'];
  const whole = keys(sessionsOf(await profile(sample)));
  const shards = [
    await profile([...sample, '--shard-index', '0', '--shard-count', '2']),
    await profile([...sample, '--shard-index', '1', '--shard-count', '2', '--no-trace-streaming']),
  ].map((run) => keys(sessionsOf(run)));
  assert.ok(
    shards.every((s) => s.length > 0),
    `both shards send sessions: ${JSON.stringify(shards)}`,
  );
  assert.deepEqual([...(shards[0] ?? []), ...(shards[1] ?? [])].sort(), whole);
});

test('refused before anything is sent: a bad or owned --session-header (profile and probe), a ratio out of (0, 1], a sampled shard without a seed', async () => {
  const endpoint = ['-m', MODEL, '--url', sim.url, '--tokenizer', 'builtin'];
  const file = ['--input-file', trace, '--custom-dataset-type', 'mooncake_trace'];
  const cases: Array<[string[], RegExp]> = [
    [
      ['probe', '--session-header', 'X-Session-ID', '-H', 'x-session-id:1'],
      /--session-header x-session-id and -H/,
    ],
    [['--session-header', 'bad name'], /--session-header.*invalid header name "bad name"/],
    [
      ['--session-header', 'Content-Type'],
      /--session-header.*"Content-Type" is a header tokenload sets itself/,
    ],
    [['--session-header', 'X-Session-ID', '-H', 'X-Session-ID:1'], /--session-header X-Session-ID and -H/],
    // undici throws on these when a request is built, which then stalls a one-connection pool.
    [['--session-header', 'Expect'], /--session-header: "Expect" cannot carry a session id: the HTTP client/],
    [['--session-header', 'Keep-Alive'], /--session-header: "Keep-Alive" cannot carry a session id/],
    [['--session-header', 'TE'], /--session-header: "TE" cannot carry .*hop-by-hop/],
    [['-H', 'Expect: 100-continue'], /header "Expect": the HTTP client does not send it/],
    [['-H', 'Upgrade: h2c'], /header "Upgrade": the HTTP client does not send it/],
    [['-H', 'Content-Length: 5'], /header "Content-Length": tokenload sets Content-Length/],
    [['-H', 'Connection: a b'], /a Connection value is a comma-separated list of tokens/],
    [[...file, '--trace-session-sample-ratio', '0'], /--trace-session-sample-ratio/],
    [[...file, '--trace-session-sample-ratio', '1.5'], /--trace-session-sample-ratio/],
    [
      ['--trace-session-sample-ratio', '0.5'],
      /--trace-session-sample-ratio samples the sessions of an input file/,
    ],
    [
      [...file, '--trace-session-sample-ratio', '0.5', '--shard-index', '0', '--shard-count', '2'],
      /--trace-session-sample-ratio with --shard-count needs --random-seed/,
    ],
  ];
  const before = sim.capturedRequests().length;
  for (const [args, message] of cases) {
    const argv =
      args[0] === 'probe' ? ['probe', ...endpoint, ...args.slice(1)] : ['profile', ...endpoint, ...args];
    const r = await runBuiltCliInProcess(argv);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  assert.equal(sim.capturedRequests().length, before, 'nothing was sent');
});
