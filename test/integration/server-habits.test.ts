/**
 * Servers with other habits, as a new user meets them, through the product (`runProfile` and the
 * CLI): a server that answers some stream requests with one JSON body, one that sends usage on some
 * answers only, a `--url` whose path is wrong (every request 404) or ends in `/v1`. What the user
 * must see: no streaming metric from an answer that was not streamed, one warning per habit with
 * its counts, the counts that were used, and a run in which nothing succeeded failing first and
 * with a non-zero exit.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';
import { type InProcessExit, runCliInProcess } from '../helpers/cli-in-process.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { inlineFixture, startFixturePlayer } from '../helpers/fixture-player.js';

const SILENT = { info: () => undefined, warn: () => undefined };
const TEXT = ['Hello', ',', ' world', '!'];

/** How the server answers the n-th chat request (0-based). */
interface Habit {
  /** Answer with one `chat.completion` JSON body instead of an event stream. */
  json(n: number): boolean;
  /** Send `usage`. */
  usage(n: number): boolean;
  /** Leave `prompt_tokens` out of the usage sent. */
  noPromptTokens?: boolean;
}

let habit: Habit = { json: () => false, usage: () => true };
let served = 0;
const paths: string[] = [];
/** Every GET's path and query, in order. */
const gets: string[] = [];
/** Every request's Authorization header (absent: undefined), in order. */
const authorizations: Array<string | undefined> = [];
let server: Server;
let origin = '';

const fullUsage = { prompt_tokens: 16, completion_tokens: TEXT.length, total_tokens: 16 + TEXT.length };

/** The usage object the server sends with its current habit. */
function usageSent(): object {
  if (habit.noPromptTokens !== true) return fullUsage;
  const { prompt_tokens: _, ...rest } = fullUsage;
  return rest;
}

function sseBody(withUsage: boolean): string {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const parts = TEXT.map((t) => chunk({ content: t }, null));
  parts.push(chunk({}, 'stop'));
  if (withUsage)
    parts.push(
      `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage: usageSent() })}\n\n`,
    );
  return `${parts.join('')}data: [DONE]\n\n`;
}

function jsonBody(withUsage: boolean): string {
  const message = { role: 'assistant', content: TEXT.join('') };
  const body = { object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'stop' }] };
  return JSON.stringify(withUsage ? { ...body, usage: usageSent() } : body);
}

/** `/v1/models` lists the model `m`; any other GET is 404. */
function answerGet(url: string, pathname: string, res: ServerResponse): void {
  gets.push(url);
  const found = pathname === '/v1/models';
  res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
  res.end(found ? '{"object":"list","data":[{"id":"m","object":"model"}]}' : '{"detail":"Not Found"}');
}

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      authorizations.push(req.headers.authorization);
      const pathname = new URL(req.url ?? '/', 'http://x').pathname;
      if (req.method === 'GET') {
        answerGet(req.url ?? '', pathname, res);
        return;
      }
      paths.push(req.url ?? '');
      if (pathname !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
        return;
      }
      const n = served++;
      const json = habit.json(n);
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'text/event-stream' });
      // Two writes apart in time, so a streamed answer has a first token before its last.
      const body = json ? jsonBody(habit.usage(n)) : sseBody(habit.usage(n));
      const cut = json ? body.length : body.indexOf('data:', 10);
      res.write(body.slice(0, cut));
      setTimeout(() => res.end(body.slice(cut)), 20);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-habits-'));
  dirs.push(dir);
  return dir;
}

interface Summary {
  warnings: string[];
  responses: {
    successful: number;
    not_streamed: number;
    with_usage: number;
    without_usage: number;
    isl_from: Record<string, number>;
    osl_from: Record<string, number>;
  };
  run_status: { status: string; reason: string | null; exit_code: number };
  [tag: string]: unknown;
}

/** Four streamed chat requests, one at a time, against the server with `next` habits. */
async function profileWith(next: Habit, over: { useServerTokenCount?: boolean } = {}) {
  habit = next;
  served = 0;
  const dir = tempDir();
  const outcome = await runProfile(
    profileConfig({
      models: ['m'],
      tokenizer: 'builtin',
      url: origin,
      streaming: true,
      synthetic: { isl: 16, osl: 4, numDatasetEntries: 4 },
      requestCount: 4,
      concurrency: 1,
      randomSeed: 1,
      clientWarmupMs: 0,
      ui: 'none',
      artifactDir: dir,
      commandLine: 'test',
      ...over,
    }),
    { log: SILENT, stopSignal: new AbortController().signal },
  );
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
  const lines = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  const records = lines.map((l) => JSON.parse(l) as { metadata: Record<string, unknown>; metrics: object });
  return { outcome, summary, records };
}

const count = (summary: Summary, tag: string) => (summary[tag] as { count?: number } | undefined)?.count;

test('some stream requests answered with one JSON body: their streaming metrics are absent, counted and warned once', async () => {
  const { outcome, summary, records } = await profileWith({ json: (n) => n % 2 === 1, usage: () => true });
  assert.equal(summary.responses.not_streamed, 2);
  assert.deepEqual(
    records.map((r) => r.metadata.response_streamed),
    [true, false, true, false],
  );
  for (const r of records.filter((x) => x.metadata.response_streamed === false)) {
    assert.deepEqual(
      Object.keys(r.metrics).filter((t) => /token_latency|first|second|chunk|per_user/.test(t)),
      [],
    );
  }
  // Every request counts for latency and tokens; only the streamed two for the streaming metrics.
  assert.equal(count(summary, 'request_latency'), 4);
  assert.equal(count(summary, 'output_sequence_length'), 4);
  assert.equal(count(summary, 'time_to_first_token'), 2);
  assert.equal(count(summary, 'inter_token_latency'), 2);
  const warned = summary.warnings.filter((w) => w.includes('ignored stream: true'));
  assert.equal(warned.length, 1, JSON.stringify(summary.warnings));
  assert.match(warned[0] as string, /for 2 of 4 successful requests/);
  assert.match(warned[0] as string, /streaming metrics cover only the other 2/);
  assert.equal(outcome.consoleText.split('ignored stream: true').length - 1, 1, 'warned once in the console');
  assert.equal(outcome.status.exit_code, 0);
});

test('every stream request answered with one JSON body: no streaming metric at all, and the warning says all', async () => {
  const { summary } = await profileWith({ json: () => true, usage: () => true });
  assert.equal(summary.responses.not_streamed, 4);
  assert.equal(summary.time_to_first_token, undefined);
  assert.equal(summary.inter_token_latency, undefined);
  assert.equal(count(summary, 'request_latency'), 4);
  assert.ok((summary.output_token_throughput as { avg: number }).avg > 0);
  assert.ok(
    summary.warnings.some((w) => w.includes('all 4 successful requests were answered with one JSON body')),
  );
});

test('a server that never sends usage: said once, with the counts that were used', async () => {
  const { summary, outcome } = await profileWith({ json: () => false, usage: () => false });
  assert.deepEqual([summary.responses.with_usage, summary.responses.without_usage], [0, 4]);
  assert.deepEqual(summary.responses.osl_from, { server_usage: 0, client_tokenizer: 4, content_chunks: 0 });
  const warned = summary.warnings.filter((w) => w.includes('usage'));
  assert.equal(warned.length, 1, JSON.stringify(summary.warnings));
  assert.match(
    warned[0] as string,
    /^the server sent no usage with any of the 4 successful requests although it was asked for \(stream_options\.include_usage\): for them, OSL is the client tokenizer's count of the output text and ISL the length of the prompt tokenload built/,
  );
  assert.ok(outcome.consoleText.includes(`Warning: ${warned[0]}`));
});

test('usage on some answers only, with --use-server-token-count: counts per source and which counts were used', async () => {
  const { summary } = await profileWith(
    { json: () => false, usage: (n) => n < 3 },
    { useServerTokenCount: true },
  );
  assert.deepEqual([summary.responses.with_usage, summary.responses.without_usage], [3, 1]);
  assert.deepEqual(summary.responses.isl_from, { server_usage: 3, client_prompt: 1 });
  assert.deepEqual(summary.responses.osl_from, { server_usage: 3, client_tokenizer: 1, content_chunks: 0 });
  const warned = summary.warnings.filter((w) => w.includes('usage'));
  assert.equal(warned.length, 1, JSON.stringify(summary.warnings));
  // Which requests each count applies to is said by name, never by a pronoun.
  assert.match(
    warned[0] as string,
    /^1 of 4 successful requests came without usage although it was asked for \(stream_options\.include_usage\): for the 1 without usage, OSL is the client tokenizer's count of the output text; /,
  );
  assert.match(warned[0] as string, /; the 3 with usage have the server's counts \(OSL and ISL from usage\)/);
  assert.match(
    warned[0] as string,
    /--use-server-token-count could not apply to 1: their ISL is the length of the prompt/,
  );
});

test('--use-server-token-count with usage that has no prompt_tokens: said once, with the count', async () => {
  const { summary } = await profileWith(
    { json: () => false, usage: () => true, noPromptTokens: true },
    { useServerTokenCount: true },
  );
  assert.deepEqual(summary.responses.isl_from, { server_usage: 0, client_prompt: 4 });
  const warned = summary.warnings.filter((w) => w.includes('--use-server-token-count'));
  assert.deepEqual(warned, [
    '--use-server-token-count could not apply to 4 of 4 successful requests: their usage had no prompt_tokens, so their ISL is the length of the prompt tokenload built.',
  ]);
});

/**
 * Runs the CLI's `main` in this process: these runs read the exit code, stderr and the artifacts,
 * and a process start would cost more than the 3 requests each sends. The one test that reads the
 * console's stdout runs the built CLI as a process ({@link runCliProcess}).
 */
function runCli(args: string[]): Promise<InProcessExit> {
  return runCliInProcess(args);
}

const cliArgs = (url: string, dir: string) => [
  'profile',
  '-m',
  'm',
  '--tokenizer',
  'builtin',
  '--url',
  url,
  '--streaming',
  '--request-count',
  '3',
  '--ui',
  'none',
  '--client-warmup-ms',
  '0',
  '--artifact-dir',
  dir,
];

test('every request failed (a wrong path in --url): exit 3, the failure first in the console, with the top error and a hint', async () => {
  habit = { json: () => false, usage: () => true };
  const dir = join(tempDir(), 'out');
  const r = await runCliProcess(cliArgs(`${origin}/api`, dir));
  assert.equal(r.code, 3, r.stderr);
  const first = r.stdout.split('\n')[0] ?? '';
  assert.match(
    first,
    /^Run failed: no request succeeded: all 3 requests failed: 404 Not Found ×3 \("\{"detail":"Not Found"\}"\)/,
  );
  assert.ok(first.includes(`POST ${origin}/api/v1/chat/completions: check --url`), first);
  // Said before anything was sent, too: the /v1/models probe got 404.
  assert.ok(
    r.stderr.includes(
      `GET ${origin}/api/v1/models answered 404 before the run: --url may hold a wrong path (requests go to ${origin}/api/v1/chat/completions)`,
    ),
    r.stderr,
  );
  assert.ok(
    r.stdout.indexOf('Client health:') > r.stdout.indexOf('Run failed:'),
    'client health comes after the failure',
  );
  assert.match(r.stderr, /^error: no request succeeded: all 3 requests failed/m);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
  assert.equal(summary.run_status.status, 'failed');
  assert.equal(summary.run_status.exit_code, 3);
  assert.match(summary.run_status.reason ?? '', /^no request succeeded: all 3 requests failed: 404/);
});

test("--url holding another endpoint's path is warned about before anything is sent", async () => {
  habit = { json: () => false, usage: () => true };
  const before = paths.length;
  const dir = join(tempDir(), 'out');
  const r = await runCli(cliArgs(`${origin}/v1/completions`, dir));
  assert.equal(r.code, 3, r.stderr);
  const warning =
    `--url has the path /v1/completions, the completions endpoint's path: with --endpoint-type chat ` +
    `requests go to ${origin}/v1/completions/v1/chat/completions; give --url without it, or --endpoint-type completions`;
  const at = r.stderr.indexOf(warning);
  assert.ok(at >= 0, r.stderr);
  assert.ok(at < r.stderr.indexOf('profiling:'), 'before the profiling phase starts');
  assert.deepEqual(paths.slice(before), Array(3).fill('/v1/completions/v1/chat/completions'));
});

test('--url ending in /v1 posts to /v1/chat/completions, as AIPerf does, and says so', async () => {
  habit = { json: () => false, usage: () => true };
  const before = paths.length;
  const dir = join(tempDir(), 'out');
  const r = await runCli(cliArgs(`${origin}/v1`, dir));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(paths.slice(before), Array(3).fill('/v1/chat/completions'));
  assert.match(
    r.stderr,
    /--url has the path \/v1: requests go to http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/,
  );
  assert.doesNotMatch(
    r.stderr,
    /warning: (?!server metrics:)/,
    'a right path is not warned about (this stub has no /metrics)',
  );
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
  assert.deepEqual(summary.run_status, { status: 'completed', reason: null, exit_code: 0 });
});

test('--url naming the whole endpoint: requests and the /v1/models probe both go where they should, no warning', async () => {
  habit = { json: () => false, usage: () => true };
  const [postsBefore, getsBefore] = [paths.length, gets.length];
  const dir = join(tempDir(), 'out');
  const r = await runCli(cliArgs(`${origin.replace('http://', '')}/v1/chat/completions`, dir));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(paths.slice(postsBefore), Array(3).fill('/v1/chat/completions'));
  assert.ok(gets.slice(getsBefore).includes('/v1/models'), gets.slice(getsBefore).join(' '));
  assert.doesNotMatch(r.stderr, /answered 404|wrong path/);
});

test('--url with /v1 twice: one line says where requests go and why, no contradicting note', async () => {
  habit = { json: () => false, usage: () => true };
  const dir = join(tempDir(), 'out');
  const r = await runCli(cliArgs(`${origin}/v1/v1`, dir));
  // The stub serves /v1/chat/completions only: the run fails, and the probe's 404 says so too.
  assert.equal(r.code, 3, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => l.includes('/v1 twice') || l.includes('not doubled'));
  assert.deepEqual(lines, [
    `[tokenload] warning: --url has the path /v1/v1: requests go to ${origin}/v1/v1/chat/completions, a path with /v1 twice (the endpoint's /v1 is not added again, as AIPerf joins them); check --url`,
  ]);
  assert.doesNotMatch(r.stderr, /not doubled/);
});

test('a query in --url goes with every request, the /v1/models probe and the wait-for-model polls', async () => {
  habit = { json: () => false, usage: () => true };
  const [postsBefore, getsBefore] = [paths.length, gets.length];
  const dir = join(tempDir(), 'out');
  const query = '?api-version=2024-06-01';
  const r = await runCli([
    ...cliArgs(`${origin}/v1${query}`, dir),
    '--wait-for-model-timeout',
    '10',
    '--wait-for-model-mode',
    'both',
  ]);
  assert.equal(r.code, 0, r.stderr);
  // One 1-token wait poll, then the three measured requests.
  assert.deepEqual(paths.slice(postsBefore), Array(4).fill(`/v1/chat/completions${query}`));
  // The wait's model list, then the pre-run probe; the /metrics scrape is the server's own, without it.
  const modelGets = gets.slice(getsBefore).filter((g) => g.startsWith('/v1/models'));
  assert.deepEqual(modelGets, [`/v1/models${query}`, `/v1/models${query}`]);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
  assert.deepEqual(summary.tokenload_config, {
    ...(summary.tokenload_config as object),
    url: [`${origin}/v1${query}`],
  });
});

test('credentials in --url are refused (they would not be sent) without printing the password', async () => {
  const before = authorizations.length;
  const dir = join(tempDir(), 'out');
  for (const url of [
    `bob:s3cret@${origin.replace('http://', '')}`,
    `http://bob:s3cret@${origin.replace('http://', '')}/v1`,
  ]) {
    const r = await runCli(cliArgs(url, dir));
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /put credentials in --api-key or -H 'Authorization: …'/);
    assert.match(r.stderr, /--url (http:\/\/)?bob:<redacted>@/);
    assert.doesNotMatch(r.stderr, /s3cret/);
  }
  const file = join(tempDir(), 'run.yaml');
  writeFileSync(file, `url: http://bob:s3cret@${origin.replace('http://', '')}\n`);
  const f = await runCli(['profile', '-f', file, '-m', 'm', '--tokenizer', 'builtin']);
  assert.equal(f.code, 2, f.stderr);
  assert.match(f.stderr, /run\.yaml:1: key "url": a URL's user:password@ is not sent/);
  assert.doesNotMatch(f.stderr, /s3cret/);
  assert.equal(authorizations.length, before, 'nothing was sent');
});

test('a URL password anywhere in the command line is redacted in every artifact that records it', async () => {
  habit = { json: () => false, usage: () => true };
  const dir = join(tempDir(), 'out');
  const r = await runCli([
    ...cliArgs(origin, dir),
    '--extra-inputs',
    'callback_url:https://bob:s3cret@hooks.example/x',
  ]);
  assert.equal(r.code, 0, r.stderr);
  for (const name of ['profile_export_aiperf.json', 'profile_export_console.txt', 'report.html']) {
    const text = readFileSync(join(dir, name), 'utf8');
    assert.doesNotMatch(text, /s3cret/, name);
    assert.match(text, /https:\/\/bob:&?(lt;|<)redacted(&gt;|>)@hooks\.example/, name);
  }
});

test('the model is not served: exit 3, the hint points at --model and names the models the server lists', async () => {
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0, models: ['other-model'] });
  try {
    for (const model of ['m', 'Qwen/Qwen2.5-7B-Instruct']) {
      const dir = join(tempDir(), 'out');
      const args = cliArgs(sim.url, dir);
      args[args.indexOf('-m') + 1] = model;
      const r = await runCli(args);
      assert.equal(r.code, 3, r.stderr);
      const hint = `. The server says the model is not there: check --model (${model}); the server's /v1/models lists other-model`;
      assert.ok(r.stderr.includes(hint), r.stderr);
      assert.doesNotMatch(r.stderr, /check --url/);
      const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
      assert.ok(summary.run_status.reason?.endsWith(hint), summary.run_status.reason ?? '');
    }
  } finally {
    await sim.close();
  }
});

test('a 400 whose reason is long: the error line quotes its start and says where it is whole, and every record keeps it whole', async () => {
  const reason = `This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4900 in the messages, 100 in the completion). ${'Please reduce the length of the messages or completion. '.repeat(8)}(end of the reason)`;
  const body = JSON.stringify({ object: 'error', message: reason, type: 'BadRequestError', code: 400 });
  assert.ok(body.length > 500);
  const player = await startFixturePlayer([
    inlineFixture('long-400', {
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.parse(body),
    }),
  ]);
  try {
    const dir = join(tempDir(), 'out');
    const args = cliArgs(player.origin, dir);
    args[args.indexOf('-m') + 1] = 'test-model';
    const r = await runCli(args);
    assert.equal(r.code, 3, r.stderr);
    const line = r.stderr.split('\n').find((l) => l.startsWith('error: no request succeeded')) ?? '';
    assert.ok(
      line.startsWith(
        `error: no request succeeded: all 3 requests failed: 400 Bad Request ×3 ("${body.slice(0, 100)}`,
      ),
      line,
    );
    assert.ok(line.includes('…", full text in profile_export.jsonl, error.message)'), line);
    assert.ok(!line.includes('(end of the reason)'), 'the line is bounded');
    const records = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n');
    assert.equal(records.length, 3);
    for (const l of records)
      assert.equal((JSON.parse(l) as { error: { message: string } }).error.message, body);
  } finally {
    await player.close();
  }
});
