/**
 * The client-health verdict and the calibration as a user meets them, through the real CLI (the
 * built one) against the built-in simulator: a bursty trace's summary carries the floor the run measured
 * and its bursts, with a verdict from the defined set; a calibration whose lowest step failed does not
 * make `profile` warn "exceeds 0 req/s"; `calibrate` writes floor-judged steps and no 0 ceiling; a
 * sparse replay against a server that closes idle connections after 1 s names that close and sends
 * every request on a connection opened just before it.
 * Only the sparse replay's `status` is not `late` depends on this machine sending on time (four
 * requests 1.4 s apart to a loopback server): the reason this file is serial.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FLOOR_WAKEUPS } from '../../src/health/client-floor.js';
import { runCliProcess } from '../helpers/cli-process.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-health-'));
  dirs.push(dir);
  return dir;
}

/** Runs the CLI with HOME at `home` (where `profile` looks for the calibration file). */
function runCli(
  args: string[],
  home: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCliProcess(args, { ...process.env, HOME: home });
}

const FAST_SIMULATOR = ['--simulator', '--simulator-option', 'mode=fixed', '--simulator-option', 'ttftMs=0'];

/** Three bursts of 8 one-turn sessions, each burst on one trace timestamp, 0.2 s apart. */
function burstyTrace(dir: string): string {
  const lines = [];
  for (let id = 0; id < 24; id++) {
    const row = { chat_id: id, parent_chat_id: -1, timestamp: Math.floor(id / 8) * 0.2, input_length: 32 };
    lines.push(
      JSON.stringify({ ...row, output_length: 4, type: 'text', turn: 1, hash_ids: [id * 2, id * 2 + 1] }),
    );
  }
  const file = join(dir, 'bursts.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const STATUSES = ['ok', 'busy', 'late', 'saturated'];

test("a bursty replay's client_health has the run's floor, its largest burst and a verdict from the set", async () => {
  const dir = tempDir();
  const out = join(dir, 'run');
  const args = [
    'profile',
    ...FAST_SIMULATOR,
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--streaming',
    '--ui',
    'none',
    '--artifact-dir',
    out,
  ];
  const r = await runCli(
    [...args, '--input-file', burstyTrace(dir), '--custom-dataset-type', 'bailian_trace', '--fixed-schedule'],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const health = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8')).client_health;
  assert.equal(health.wake_floor_ms.count, FLOOR_WAKEUPS);
  assert.ok(health.idle_loop_delay_ms.p99 > 0);
  assert.equal(health.late_sends.largest_burst, 8);
  assert.ok(STATUSES.includes(health.status), health.status);
  assert.equal(health.saturated, health.status === 'saturated');
  assert.equal('late_cause' in health, health.status === 'late');
  assert.ok(health.verdict.startsWith(health.status), health.verdict);
  assert.match(health.verdict, new RegExp(`wake floor p99 ${health.wake_floor_ms.p99} \\+ 2`));
  assert.match(r.stdout, new RegExp(`^Client health: ${health.status}`, 'm'));
});

test('a calibration whose lowest step failed does not make profile warn "exceeds 0 req/s"', async () => {
  const home = tempDir();
  mkdirSync(join(home, '.cache', 'tokenload'), { recursive: true });
  const calibration = { schemaVersion: 2, measuredAt: '2026-12-01T00:00:00Z', maxRequestRatePerS: null };
  writeFileSync(
    join(home, '.cache', 'tokenload', 'calibration.json'),
    JSON.stringify({ ...calibration, rateSteps: [{ target: 50 }], streamSteps: [] }),
  );
  const args = [
    'profile',
    ...FAST_SIMULATOR,
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--ui',
    'none',
    '--request-count',
    '6',
    // A message read before anything is sent: neither warm-up has a part in it.
    ...['--client-warmup-ms', '0', '--simulator-option', 'warmup-ms=0'],
  ];
  const r = await runCli([...args, '--request-rate', '60', '--artifact-dir', join(home, 'run')], home);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /exceeds 0 req\/s/);
  assert.match(r.stderr, /--request-rate 60: this machine's rate ceiling is below 50 req\/s/);
});

test('calibrate judges each step against its own floor and never saves a 0 ceiling', async () => {
  const home = tempDir();
  const file = join(home, 'calibration.json');
  const args = [
    'calibrate',
    '--seconds',
    '0.5',
    '--max-rate',
    '100',
    '--max-streams',
    '100',
    '--output',
    file,
  ];
  const r = await runCli(args, home);
  assert.equal(r.code, 0, r.stderr);
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(saved.schemaVersion, 2);
  assert.notEqual(saved.maxRequestRatePerS, 0);
  for (const s of [...saved.rateSteps, ...saved.streamSteps]) {
    assert.equal(typeof s.wakeFloorP99Ms, 'number');
    assert.equal(typeof s.limitMs, 'number');
  }
  assert.match(
    r.stdout,
    /^Max request rate \(send lag p99 ≤ wake floor p99 \+ 2 ms\): (\d+ req\/s|below the lowest step \(50 req\/s\))$/m,
  );
  assert.doesNotMatch(r.stdout, /: 0 req\/s/);
  assert.match(r.stdout, /tokenload profile reads only .*calibration\.json, not this file/);
});

/**
 * An OpenAI-like streaming server that closes a connection idle for 1 s. `announce`: Node's own
 * `keepAliveTimeout = 1000`, announced in a `Keep-Alive: timeout=1` header (Node 20 closes about a
 * second later still); else no header and the server ends the connection 1 s after each answer
 * itself, as uvicorn does after its `timeout_keep_alive` (5 s by default).
 */
async function keepAliveServer(announce: boolean): Promise<{ url: string; server: Server }> {
  const chunk = (delta: object, finish: string | null): string =>
    `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const idle = new WeakMap<object, NodeJS.Timeout>();
  const server = createServer({ keepAliveTimeout: announce ? 1000 : 0 }, (req, res) => {
    const socket = req.socket;
    clearTimeout(idle.get(socket));
    if (!announce)
      res.on('finish', () =>
        idle.set(
          socket,
          setTimeout(() => socket.end(), 1000),
        ),
      );
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: 'Hi' }, null));
      setTimeout(() => res.end(`${chunk({ content: '!' }, 'stop')}data: [DONE]\n\n`), 10);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface SparseRun {
  health: {
    status: string;
    verdict: string;
    late_cause?: string;
    idle_closed_connections?: Record<string, number | null>;
  };
  requestsOnNew: number;
  records: Array<{ metadata: { connection_reused: boolean }; metrics: Record<string, unknown> }>;
}

/** Replays four rows 1.4 s apart against a {@link keepAliveServer}. */
async function sparseReplay(announce: boolean): Promise<SparseRun> {
  const { url, server } = await keepAliveServer(announce);
  const dir = tempDir();
  const trace = join(dir, 'sparse.jsonl');
  const rows = [0, 1400, 2800, 4200].map((ts, i) => ({
    timestamp: ts,
    input_length: 16,
    output_length: 2,
    hash_ids: [i],
  }));
  writeFileSync(trace, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const out = join(dir, 'out');
  try {
    const { code, stderr } = await runCli(
      [
        'profile',
        ...['--model', 'm', '--tokenizer', 'builtin', '--streaming', '--url', url, '--ui', 'none'],
        ...['--input-file', trace, '--custom-dataset-type', 'mooncake_trace', '--fixed-schedule'],
        ...['--no-trace-streaming', '--artifact-dir', out],
      ],
      dir,
    );
    assert.equal(code, 0, stderr);
  } finally {
    server.closeAllConnections();
    server.close();
  }
  const summary = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8'));
  const lines = readFileSync(join(out, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  return {
    health: summary.client_health,
    requestsOnNew: summary.connections.requests_on_new_connections,
    records: lines.map((l) => JSON.parse(l)),
  };
}

test('a sparse replay against a server closing idle connections after 1 s: the close is named, not "late", and each request gets a connection opened just before it', async () => {
  const [silent, announced] = await Promise.all([sparseReplay(false), sparseReplay(true)]);
  for (const run of [silent, announced]) {
    // The idle closes are never the client's lateness: not `late (connections)`. (A GC pause at one of
    // four sends can still make the run `late (pauses)`; that verdict is about the pause, and true.)
    assert.ok(run.health.status !== 'late' || run.health.late_cause !== 'connections', run.health.verdict);
    assert.equal(run.requestsOnNew, 0);
    assert.equal(run.records.length, 4);
    for (const r of run.records) {
      assert.equal(r.metadata.connection_reused, true);
      assert.equal(r.metrics.connect_time, undefined);
    }
  }
  // The server closed each idle connection about 1 s after its answer, before the next request at 1.4 s.
  const closes = silent.health.idle_closed_connections;
  assert.deepEqual(
    { ...closes, idle_s: undefined },
    {
      requests: 3,
      waited: 0,
      wait_ms_max: 0,
      idle_s: undefined,
      closed_by_server: 3,
      closed_by_client: 0,
      server_keep_alive_s: null,
    },
  );
  assert.ok(Math.abs((closes?.idle_s as number) - 1) < 0.2, `idle_s ${closes?.idle_s}`);
  assert.match(
    silent.health.verdict,
    /; the server closed idle connections after ~1 s \(its keep-alive timeout\); no request waited for a new connection, 3 got one opened just before their send$/,
  );
  // Told 1 s, the client's pool closes each connection after its answer itself (undici keeps 2 s in hand).
  assert.equal(announced.health.idle_closed_connections?.closed_by_client, 3);
  assert.equal(announced.health.idle_closed_connections?.server_keep_alive_s, 1);
  assert.match(
    announced.health.verdict,
    /; the server's keep-alive timeout of 1 s \(its Keep-Alive header\) made the client close idle connections right after each answer, before the server would; no request waited/,
  );
});
