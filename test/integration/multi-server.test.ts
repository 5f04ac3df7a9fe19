/**
 * Several servers (`--url` repeated or comma-separated), through the product: two simulators each
 * keep the bodies they received, a multi-turn dataset names its session in every prompt, and the
 * user's view is `profile_export.jsonl` (every record's `server_url`), the summary's `servers`
 * section and the console. Sessions go round-robin, every turn of a session to one server; a base
 * URL ending in `/v1` works for every endpoint type on every server of the list; a server that is
 * down fails the run before anything is sent, naming it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ENDPOINT_TYPES, ENDPOINTS } from '../../src/endpoint/registry.js';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { type InProcessExit, runBuiltCliInProcess } from '../helpers/cli-in-process.js';
import { type ProcessExit, runCliProcess } from '../helpers/cli-process.js';

const SESSIONS = 6;
const TURNS = 3;
const SILENT = { info: () => undefined, warn: () => undefined };

interface Line {
  metadata: { conversation_id: string; turn_index: number; server_url: string | null; session_num: number };
  error: unknown;
}

interface ServerEntry {
  url: string;
  request_count: number;
  error_request_count: number;
  sessions: number;
  request_latency?: { p50: number; count: number };
}

let simA: RunningSimulator;
let simB: RunningSimulator;
let dataset = '';

before(async () => {
  [simA, simB] = await Promise.all([
    startSimulator({ mode: 'fixed', ttftMs: 2, itlMs: 1 }, { captureRequests: true }),
    startSimulator({ mode: 'fixed', ttftMs: 2, itlMs: 1 }, { captureRequests: true }),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-servers-'));
  dataset = join(dir, 'sessions.jsonl');
  const rows = Array.from({ length: SESSIONS }, (_, s) => ({
    session_id: `s${s}`,
    turns: Array.from({ length: TURNS }, (_, t) => ({ text: `session s${s} turn ${t}`, output_length: 3 })),
  }));
  writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join('\n'));
});

after(async () => {
  await Promise.all([simA?.close(), simB?.close()]);
});

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'tokenload-servers-run-'));
}

function readLines(dir: string): Line[] {
  return readFileSync(join(dir, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
}

function readSummary(dir: string): { servers?: ServerEntry[]; request_count?: { avg: number } } {
  return JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
}

/** Runs `tokenload profile args` as a process (the built CLI), capturing its output. */
function cli(args: string[]): Promise<ProcessExit> {
  return runCliProcess(['profile', ...args]);
}

/**
 * Runs `tokenload profile args` through the built CLI's `main` in this process (exit code and
 * stderr), for the runs refused before anything is sent: cheaper than a process start.
 */
function cliInProcess(args: string[]): Promise<InProcessExit> {
  return runBuiltCliInProcess(['profile', ...args]);
}

/** The session named in each captured prompt of `sim`, from index `from` on. */
function sessionsSeen(sim: RunningSimulator, from: number): string[] {
  return sim
    .capturedRequests()
    .slice(from)
    .map((r) => {
      const messages = (JSON.parse(r.body) as { messages: Array<{ content: string }> }).messages;
      return /session (s\d+) turn/.exec(messages[messages.length - 1]?.content ?? '')?.[1] ?? '?';
    });
}

/** Asserts stickiness and balance from the records, and that each server received what its records say. */
function checkSpread(dir: string, fromA: number, fromB: number): void {
  const lines = readLines(dir);
  assert.equal(lines.length, SESSIONS * TURNS);
  assert.ok(lines.every((l) => l.error === null));
  const serverOf = new Map<string, Set<string>>();
  for (const { metadata: m } of lines) {
    const set = serverOf.get(m.conversation_id) ?? new Set<string>();
    set.add(String(m.server_url));
    serverOf.set(m.conversation_id, set);
  }
  // Sticky: every turn of a session on one server.
  for (const [session, servers] of serverOf) assert.equal(servers.size, 1, `${session}: ${[...servers]}`);
  // Round-robin: the sessions split evenly over the two servers, by session number.
  const onA = [...serverOf].filter(([, s]) => s.has(simA.url)).map(([id]) => id);
  const onB = [...serverOf].filter(([, s]) => s.has(simB.url)).map(([id]) => id);
  assert.equal(onA.length, SESSIONS / 2);
  assert.equal(onB.length, SESSIONS / 2);
  for (const { metadata: m } of lines)
    assert.equal(m.server_url, m.session_num % 2 === 0 ? simA.url : simB.url);
  // Each server received exactly the turns of the sessions its records name.
  assert.deepEqual(new Set(sessionsSeen(simA, fromA)), new Set(onA));
  assert.deepEqual(new Set(sessionsSeen(simB, fromB)), new Set(onB));
  assert.equal(sessionsSeen(simA, fromA).length, (SESSIONS / 2) * TURNS);
  const servers = readSummary(dir).servers;
  assert.deepEqual(
    servers?.map((s) => [s.url, s.request_count, s.error_request_count, s.sessions]),
    [
      [simA.url, (SESSIONS / 2) * TURNS, 0, SESSIONS / 2],
      [simB.url, (SESSIONS / 2) * TURNS, 0, SESSIONS / 2],
    ],
  );
  for (const s of servers ?? []) assert.equal(s.request_latency?.count, (SESSIONS / 2) * TURNS);
}

test('two --url: sessions round-robin, every turn of a session on one server, each record names it', async () => {
  const dir = tempDir();
  const fromA = simA.capturedRequests().length;
  const fromB = simB.capturedRequests().length;
  const r = await cli([
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    simA.url,
    '--url',
    simB.url,
    '--input-file',
    dataset,
    '--custom-dataset-type',
    'multi_turn',
    '--conversation-num',
    String(SESSIONS),
    '--concurrency',
    '2',
    '--streaming',
    '--client-warmup-ms',
    '0',
    '--ui',
    'none',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  checkSpread(dir, fromA, fromB);
  assert.match(r.stderr, /2 servers: .*; sessions round-robin, each session on one server/);
  for (const sim of [simA, simB])
    assert.ok(
      r.stdout.includes(`Server ${sim.url}: ${(SESSIONS / 2) * TURNS} requests in 3 sessions`),
      r.stdout,
    );
  // Each server's own /metrics is scraped, and the summary keeps them apart.
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
  const scraped = summary.server_metrics.endpoints.map((e: { url: string; status: string }) => [
    e.url,
    e.status,
  ]);
  assert.deepEqual(scraped, [
    [`${simA.url}/metrics`, 'ok'],
    [`${simB.url}/metrics`, 'ok'],
  ]);
});

test('a comma list in one --url, with worker threads: the same spread', async () => {
  const dir = tempDir();
  const fromA = simA.capturedRequests().length;
  const fromB = simB.capturedRequests().length;
  const r = await cli([
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    `${simA.url},${simB.url}`,
    '--input-file',
    dataset,
    '--custom-dataset-type',
    'multi_turn',
    '--conversation-num',
    String(SESSIONS),
    '--concurrency',
    '3',
    '--workers',
    '2',
    '--client-warmup-ms',
    '0',
    '--ui',
    'none',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  checkSpread(dir, fromA, fromB);
});

test('a trace replay (Bailian chains, streamed): every turn of a conversation on its server', async () => {
  const dir = tempDir();
  const trace = join(dir, 'trace.jsonl');
  const rows = [];
  for (let turn = 1; turn <= TURNS; turn++)
    for (let s = 0; s < SESSIONS; s++) {
      const chatId = 100 * turn + s;
      const parent = turn === 1 ? -1 : 100 * (turn - 1) + s;
      const timestamp = (turn - 1) * 0.1 + s * 0.01;
      rows.push({
        chat_id: chatId,
        parent_chat_id: parent,
        timestamp,
        input_length: 32,
        output_length: 3,
        turn,
        hash_ids: [s * 10 + turn, 1000 + s * 10 + turn],
      });
    }
  writeFileSync(trace, rows.map((r) => JSON.stringify(r)).join('\n'));
  await runProfile(
    {
      models: ['m'],
      tokenizer: 'builtin',
      url: [simA.url, simB.url],
      inputFile: trace,
      customDatasetType: 'bailian_trace',
      streaming: true,
      clientWarmupMs: 0,
      ui: 'none',
      artifactDir: dir,
    },
    { log: SILENT, stopSignal: new AbortController().signal },
  );
  const lines = readLines(dir);
  assert.equal(lines.length, SESSIONS * TURNS);
  const byConversation = new Map<string, Set<string | null>>();
  for (const { metadata: m } of lines)
    byConversation.set(
      m.conversation_id,
      (byConversation.get(m.conversation_id) ?? new Set()).add(m.server_url),
    );
  assert.equal(byConversation.size, SESSIONS);
  for (const [id, servers] of byConversation) assert.equal(servers.size, 1, `conversation ${id}`);
  const counts = [simA.url, simB.url].map((url) => lines.filter((l) => l.metadata.server_url === url).length);
  assert.deepEqual(counts, [(SESSIONS / 2) * TURNS, (SESSIONS / 2) * TURNS]);
});

test('a single server: no servers section, each record still names its server', async () => {
  const dir = tempDir();
  const r = await cli([
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    simA.url,
    '--request-count',
    '3',
    '--client-warmup-ms',
    '0',
    '--ui',
    'none',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readSummary(dir).servers, undefined);
  assert.deepEqual(
    readLines(dir).map((l) => l.metadata.server_url),
    [simA.url, simA.url, simA.url],
  );
});

test('--url ending in /v1 on every server of a list, for every endpoint type: one /v1, never doubled', async () => {
  for (const type of ENDPOINT_TYPES) {
    const dir = tempDir();
    const fromA = simA.capturedRequests().length;
    const fromB = simB.capturedRequests().length;
    await runProfile(
      {
        models: ['m'],
        tokenizer: 'builtin',
        url: [`${simA.url}/v1`, `${simB.url}/v1/`],
        endpointType: type,
        requestCount: 4,
        concurrency: 2,
        clientWarmupMs: 0,
        ui: 'none',
        artifactDir: dir,
        // The rankings types take their query and passages from a file only.
        ...(type.endsWith('_rankings')
          ? { inputFile: rankingsFile(), customDatasetType: 'single_turn' as const }
          : { synthetic: { isl: 8, osl: 2 } }),
        // The template type needs its body template.
        ...(type === 'template' ? { extraInputs: { payload_template: 'nv-embedqa' } } : {}),
      },
      { log: SILENT, stopSignal: new AbortController().signal },
    );
    const paths = [...simA.capturedRequests().slice(fromA), ...simB.capturedRequests().slice(fromB)].map(
      (c) => c.path,
    );
    // The adapter's own path, /v1 not doubled by the base URL's (huggingface_generate and TEI's
    // /rerank live outside /v1); the template type has none: the URL as given, its /v1 included.
    const expected = type === 'template' ? '/v1' : ENDPOINTS[type].defaultPath;
    assert.deepEqual(paths, Array(4).fill(expected), type);
    assert.equal(simA.capturedRequests().length - fromA, 2, type);
    const lines = readLines(dir);
    assert.ok(
      lines.every((l) => l.error === null),
      `${type}: ${JSON.stringify(lines.map((l) => l.error))}`,
    );
  }
});

/** A one-line rankings file: a query and two passages. */
function rankingsFile(): string {
  const file = join(tempDir(), 'rankings.jsonl');
  const texts = [
    { name: 'query', contents: ['what is a KV cache'] },
    { name: 'passages', contents: ['a cache of attention keys and values', 'a kind of bird'] },
  ];
  writeFileSync(file, `${JSON.stringify({ texts })}\n`);
  return file;
}

/** A loopback port with nothing listening. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('a server of the list that is down fails the run before anything is sent, naming it', async () => {
  const dead = `http://127.0.0.1:${await closedPort()}`;
  const fromA = simA.capturedRequests().length;
  const r = await cliInProcess([
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    simA.url,
    '--url',
    dead,
    '--ui',
    'none',
    '--artifact-dir',
    tempDir(),
  ]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`error: cannot reach ${dead.replaceAll('.', '\\.')} \\(ECONNREFUSED`));
  assert.equal(simA.capturedRequests().length, fromA, 'nothing was sent to the server that is up');
});

test('a server that takes the connection and never answers is named as such, not as unreachable', async () => {
  // Found by a new user: a hung server was reported as "cannot reach … is the server running?".
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  try {
    const r = await cli([
      '-m',
      'm',
      '--tokenizer',
      'builtin',
      '--url',
      url,
      '--ui',
      'none',
      '--artifact-dir',
      tempDir(),
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(
      r.stderr.includes(
        `error: ${url} accepted the connection but did not answer GET ${url}/v1/models within 10 s`,
      ),
      r.stderr,
    );
  } finally {
    silent.close();
  }
});

test('--url: one local server under two loopback names runs, warning that it is likely listed twice (stderr, summary, console file)', async () => {
  const port = new URL(simA.url).port;
  const out = tempDir();
  const r = await cliInProcess([
    ...['-m', 'm', '--tokenizer', 'builtin', '--client-warmup-ms', '0', '--ui', 'none'],
    ...['--url', `http://localhost:${port}`, '--url', `http://127.0.0.1:${port}`],
    ...['--request-count', '2', '--concurrency', '1', '--isl', '16', '--osl', '2', '--no-server-metrics'],
    ...['--artifact-dir', out],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const said = new RegExp(
    `--url http://localhost:${port} and --url http://127\\.0\\.0\\.1:${port} are both this machine's port ${port}: .*listed twice`,
  );
  assert.match(r.stderr, said);
  const summary = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8')) as {
    warnings: string[];
  };
  assert.ok(
    summary.warnings.some((w) => said.test(w)),
    JSON.stringify(summary.warnings),
  );
  assert.match(readFileSync(join(out, 'profile_export_console.txt'), 'utf8'), said);
});

test('--url: a server listed twice, or a bad item of a list, is a usage error naming it', async () => {
  const twice = await cliInProcess([
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    `${simA.url},${simA.url}/`,
  ]);
  assert.equal(twice.code, 2);
  assert.match(twice.stderr, new RegExp(`${simA.url.replaceAll('.', '\\.')} is listed twice`));
  // Two spellings of one server: its base URL and its OpenAI /v1 base send to the same URL.
  const sameUrl = await cliInProcess([
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    `${simA.url},${simA.url}/v1`,
  ]);
  assert.equal(sameUrl.code, 2, sameUrl.stderr);
  assert.match(
    sameUrl.stderr,
    /--url .* and --url .*\/v1 both send to .*\/v1\/chat\/completions: .*give it once/,
  );
  const bad = await cliInProcess([
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    simA.url,
    '--url',
    'ftp://x',
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--url.*only http:\/\/ and https:\/\/ are supported/);
  // A scheme with one slash (found by a new user): a usage error, not "cannot reach http://htp/…".
  for (const typo of ['htp:/localhost:8000', 'http:/localhost:8000']) {
    const r = await cliInProcess(['-m', 'm', '--tokenizer', 'builtin', '--url', typo]);
    assert.equal(r.code, 2, typo);
    assert.match(r.stderr, /not a URL: ".*" \(a scheme needs ":\/\/": http:\/\/host:port\)/, typo);
  }
});
