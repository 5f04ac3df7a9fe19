/**
 * The trace check (`analyze-trace --check`, and the start of `profile` on a trace) through the built
 * CLI, and what the runs send, read from the simulator's captured bodies: `--developer-role-as-system`;
 * synthetic prompts that differ across shards and workers (no session's prompt repeated in another
 * shard, the unsharded run's prompts the union of the shards'); sweep points that inherit no
 * multi-turn history from the point before. Messages read a count of one in the singular and round
 * a short gap to two significant digits; flags that would change nothing (`--max-context-length`
 * without `--check`, `--bailian-linear-sessions` off a Bailian file) are refused. Warm-ups off:
 * nothing here is timed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EXIT_TRACE_CHECK_FIRED } from '../../src/errors.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runBuiltCliInProcess } from '../helpers/cli-in-process.js';
import { runCliProcess } from '../helpers/cli-process.js';

let sim: RunningSimulator;

before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 }, { captureRequests: true });
});

after(async () => {
  await sim?.close();
});

const NO_WARMUP = ['--client-warmup-ms', '0', '--no-server-metrics', '--ui', 'none'];

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'tokenload-trace-check-'));
}

interface Message {
  role: string;
  content: string;
}

/** The `messages` of the requests the simulator captured from index `from` on. */
function sentMessages(from: number): Message[][] {
  return sim
    .capturedRequests()
    .slice(from)
    .map((r) => (JSON.parse(r.body) as { messages: Message[] }).messages);
}

/** Runs `profile` in this process against the shared simulator; returns the requests it sent. */
async function profile(args: string[]): Promise<Message[][]> {
  const from = sim.capturedRequests().length;
  const { code, stderr } = await runBuiltCliInProcess([
    ...['profile', '-m', 'm', '--tokenizer', 'builtin', '--url', sim.url, ...NO_WARMUP],
    ...args,
  ]);
  assert.equal(code, 0, stderr);
  return sentMessages(from);
}

/** Every `profile_export_aiperf.json` under `dir`. */
function summaries<S>(dir: string): S[] {
  const out: S[] = [];
  for (const e of readdirSync(dir, { recursive: true, encoding: 'utf8' }))
    if (e.endsWith('profile_export_aiperf.json'))
      out.push(JSON.parse(readFileSync(join(dir, e), 'utf8')) as S);
  return out;
}

interface CheckSummary {
  trace_check: {
    findings: { check: string; count: number }[];
    skipped: { check: string }[];
    developer_role_rewritten: number | null;
  };
  warnings: string[];
}

interface CheckJson {
  rows: number;
  findings: { check: string; count: number; message: string; advice: string }[];
  skipped: { check: string; reason: string }[];
}

/**
 * A BurstGPT-like CSV: one row at second 0, then from second 6 to 99 three rows on each whole second
 * (a quiet start, bursts of 3); one row with 0 request tokens, one with 0 response tokens, one of
 * 200 tokens.
 */
function burstyCsv(dir: string): string {
  const lines = ['Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type'];
  lines.push('0,ChatGPT,10,5,15,Conversation log');
  for (let s = 6; s < 100; s++)
    for (let k = 0; k < 3; k++) lines.push(`${s},ChatGPT,10,5,15,Conversation log`);
  lines.push('100,ChatGPT,0,0,0,Conversation log', '100,ChatGPT,12,0,12,Conversation log');
  lines.push('101,ChatGPT,200,5,205,Conversation log');
  const file = join(dir, 'bursty.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

test('analyze-trace --check: whole-second bursts, 0-token rows, rows over the context and a quiet start fire, with counts; exit code for CI', async () => {
  const dir = tmp();
  const file = burstyCsv(dir);
  const flags = ['--custom-dataset-type', 'burst_gpt_trace', '--json'];
  const fired = await runCliProcess([
    'analyze-trace',
    file,
    '--check',
    ...flags,
    '--max-context-length',
    '100',
  ]);
  assert.equal(fired.code, EXIT_TRACE_CHECK_FIRED, fired.stderr);
  const r = JSON.parse(fired.stdout) as CheckJson;
  const count = (check: string) => r.findings.find((f) => f.check === check)?.count;
  assert.deepEqual(
    r.findings.map((f) => f.check),
    ['quantised_timestamps', 'zero_token_rows', 'over_context', 'quiet_start'],
  );
  assert.equal(count('zero_token_rows'), 2, 'the dropped 0-request row and the kept 0-response row');
  assert.equal(count('over_context'), 1);
  const message = (check: string) => r.findings.find((f) => f.check === check)?.message ?? '';
  // Counts of one read in the singular.
  assert.match(message('over_context'), /^1 row asks for more than/);
  assert.match(message('quiet_start'), / sends 1 request \(/);
  const bursts = r.findings[0];
  assert.match(bursts?.message ?? '', /largest burst: 3 rows at one stamp/);
  assert.equal(
    bursts?.count,
    94 * 3,
    'the rows of each second from 6 to 99 (at 100, the 0-request row is dropped)',
  );
  assert.ok(r.findings.every((f) => f.advice.length > 0));

  // Without a context the check says it skipped that one; an evenly spread trace fires nothing: 0.
  const even = join(dir, 'even.csv');
  const rows = Array.from({ length: 60 }, (_, i) => `${i * 1.37},ChatGPT,10,5,15,Conversation log`);
  writeFileSync(
    even,
    `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n${rows.join('\n')}\n`,
  );
  const clean = await runCliProcess(['analyze-trace', even, '--check', ...flags]);
  assert.equal(clean.code, 0, clean.stdout);
  const c = JSON.parse(clean.stdout) as CheckJson;
  assert.deepEqual(c.findings, []);
  assert.ok(c.skipped.some((s) => s.check === 'over_context' && /--max-context-length/.test(s.reason)));
});

test('analyze-trace --check on a streamed Bailian trace: a repeated chat_id and a session that outweighs its share of shards', async () => {
  const dir = tmp();
  const row = (chat: number, parent: number, turn: number, ts: number) =>
    JSON.stringify({
      chat_id: chat,
      parent_chat_id: parent,
      timestamp: ts,
      input_length: 16,
      output_length: 2,
      type: 'text',
      turn,
      hash_ids: [chat],
    });
  // Session 1 holds 4 of the 5 requests (its root twice): whatever shard it falls to has 80 % > 1.5 / 2.
  const rows = [
    row(1, -1, 1, 0.5),
    row(1, -1, 1, 1.25),
    row(2, 1, 2, 2.5),
    row(4, 2, 3, 3.75),
    row(3, -1, 1, 4.5),
  ];
  const file = join(dir, 'bailian.jsonl');
  writeFileSync(file, `${rows.join('\n')}\n`);
  const r = await runCliProcess([
    ...['analyze-trace', file, '--check', '--custom-dataset-type', 'bailian_trace', '--json'],
    ...['--shard-count', '2'],
  ]);
  assert.equal(r.code, EXIT_TRACE_CHECK_FIRED, r.stderr);
  const c = JSON.parse(r.stdout) as CheckJson;
  assert.deepEqual(
    c.findings.map((f) => f.check),
    ['duplicate_ids', 'uneven_shards'],
  );
  assert.equal(c.findings[0]?.count, 1);
  assert.match(c.findings[0]?.message ?? '', /^1 row repeats an earlier row's chat_id \(first at line 2\)/);
  // The largest shard holds session 1's 4 requests, and row 5's too if its hash sends it there.
  assert.ok((c.findings[1]?.count ?? 0) >= 4, JSON.stringify(c.findings[1]));
});

test('a 0.15 s gap reads 0.15 s; flags that would change nothing are refused, naming why', async () => {
  const dir = tmp();
  // Ten Mooncake rows 10 ms apart, then one 150 ms later: the gap is most of the span.
  const stamps = [0, 10, 20, 30, 40, 50, 60, 70, 80, 230];
  const file = join(dir, 'gap.jsonl');
  writeFileSync(
    file,
    `${stamps.map((t) => JSON.stringify({ timestamp: t, input_length: 8, output_length: 2 })).join('\n')}\n`,
  );
  const mooncake = ['--custom-dataset-type', 'mooncake_trace'];
  const r = await runCliProcess(['analyze-trace', file, '--check', ...mooncake, '--json']);
  assert.equal(r.code, EXIT_TRACE_CHECK_FIRED, r.stderr);
  const gap = (JSON.parse(r.stdout) as CheckJson).findings.find((f) => f.check === 'long_gap');
  assert.match(gap?.message ?? '', /^nothing is sent for 0\.15 s before line 10,/);
  // At a start of `profile` with a speedup, the gap is also said in the replay's own time (the
  // check runs before any server is reached: this one is refused after it).
  const sped = await runBuiltCliInProcess([
    ...['profile', '-m', 'm', '--tokenizer', 'builtin', '--url', 'http://127.0.0.1:1', '--input-file', file],
    ...[
      ...mooncake,
      '--fixed-schedule',
      '--synthesis-speedup-ratio',
      '10',
      '--artifact-dir',
      join(dir, 'sped'),
    ],
  ]);
  assert.match(
    sped.stderr,
    /nothing is sent for 0\.15 s of trace time \(15 ms at --synthesis-speedup-ratio 10\) before line 10,/,
  );
  // --max-context-length without --check: the description never reads it.
  const noCheck = await runBuiltCliInProcess([
    'analyze-trace',
    file,
    ...mooncake,
    '--max-context-length',
    '100',
  ]);
  assert.equal(noCheck.code, 2, noCheck.stderr);
  assert.match(
    noCheck.stderr,
    /--max-context-length is read by the trace check only \(analyze-trace --check\)/,
  );
  // --bailian-linear-sessions with another format, or with no file.
  const base = ['profile', '-m', 'm', '--url', sim.url, ...NO_WARMUP, '--bailian-linear-sessions'];
  const other = await runBuiltCliInProcess([...base, '--input-file', file, ...mooncake]);
  assert.equal(other.code, 2, other.stderr);
  assert.match(
    other.stderr,
    /--bailian-linear-sessions .* needs --input-file with --custom-dataset-type bailian_trace \(got --custom-dataset-type mooncake_trace\)/,
  );
  const none = await runBuiltCliInProcess(base);
  assert.equal(none.code, 2, none.stderr);
  assert.match(none.stderr, /--bailian-linear-sessions .*\(got no --input-file\)/);
});

test('profile on a trace warns with the check’s counts, never fails; --developer-role-as-system sends developer messages as system', async () => {
  const dir = tmp();
  const file = join(dir, 'roles.jsonl');
  // Three rows stamped at one instant: a burst the check counts.
  const rows = [
    { timestamp: 0, text: 'be brief', role: 'developer' },
    { timestamp: 0, text: 'hello there' },
    { timestamp: 0, text: 'answer in French', role: 'developer' },
  ];
  writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const run = (flags: string[], out: string) =>
    profile([
      ...['--input-file', file, '--custom-dataset-type', 'single_turn', '--fixed-schedule'],
      ...['--artifact-dir', out, ...flags],
    ]);
  const plain = join(dir, 'plain');
  const refused = await run([], plain);
  assert.equal(refused.flat().filter((m) => m.role === 'developer').length, 2);
  const [before] = summaries<CheckSummary>(plain);
  assert.deepEqual(
    before?.trace_check.findings.map((f) => [f.check, f.count]),
    [
      ['quantised_timestamps', 3],
      ['developer_role', 2],
    ],
  );
  assert.equal(before?.trace_check.developer_role_rewritten, null);
  assert.ok(before?.warnings.some((w) => w.startsWith('trace check (developer_role): 2 rows')));

  const rewritten = join(dir, 'rewritten');
  const sent = await run(['--developer-role-as-system'], rewritten);
  assert.equal(sent.length, 3);
  assert.ok(sent.every((m) => m.every((x) => x.role !== 'developer')));
  assert.deepEqual(
    sent
      .flat()
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .sort(),
    ['answer in French', 'be brief'],
  );
  const [after] = summaries<CheckSummary>(rewritten);
  assert.deepEqual(
    after?.trace_check.findings.map((f) => f.check),
    ['quantised_timestamps'],
  );
  assert.equal(after?.trace_check.developer_role_rewritten, 2);
  // The bundled tokenizer's model_max_length stands in for --max-context-length: that check ran.
  assert.ok(!after?.trace_check.skipped.some((k) => k.check === 'over_context'));
});

test('synthetic prompts: no session’s first prompt repeats across two shards; the unsharded run (2 workers) sends exactly their union', async () => {
  // One run's shards share its seed (docs/sharding.md); the prompts still differ by session.
  const synthetic = [
    '--isl',
    '24',
    '--osl',
    '1',
    '--num-dataset-entries',
    '6',
    '--request-count',
    '6',
    '--random-seed',
    '7',
  ];
  const firstPrompts = (sent: Message[][]) => sent.map((m) => m.at(-1)?.content ?? '');
  const shards: string[][] = [];
  for (const i of [0, 1]) {
    const args = [...synthetic, '--concurrency', '2', '--shard-index', String(i), '--shard-count', '2'];
    shards.push(firstPrompts(await profile([...args, '--artifact-dir', join(tmp(), 'run')])));
  }
  const whole = firstPrompts(
    await profile([
      ...synthetic,
      '--concurrency',
      '2',
      '--workers',
      '2',
      '--artifact-dir',
      join(tmp(), 'run'),
    ]),
  );
  const union = [...(shards[0] ?? []), ...(shards[1] ?? [])];
  assert.equal(union.length, 6);
  assert.equal(new Set(union).size, 6, 'a prompt sent by both shards, or twice by one');
  assert.deepEqual([...whole].sort(), [...union].sort());
});

test('a 2-point sweep: the second point’s first turns carry no history (no assistant reply) from the first', async () => {
  const dir = tmp();
  const file = join(dir, 'talks.jsonl');
  const session = (id: string) => ({
    session_id: id,
    turns: [
      { text: `${id} first`, output_length: 2 },
      { text: `${id} second`, output_length: 2 },
    ],
  });
  writeFileSync(file, `${[session('a'), session('b')].map((s) => JSON.stringify(s)).join('\n')}\n`);
  // 3 requests a point: the first point ends with b's first turn answered and its second never sent.
  const sent = await profile([
    ...['--input-file', file, '--custom-dataset-type', 'multi_turn', '--request-count', '3'],
    ...['--conversation-context-mode', 'deltas_without_responses', '--concurrency', '1,2'],
    ...['--artifact-dir', join(dir, 'sweep')],
  ]);
  assert.equal(sent.length, 6);
  const firstTurns = sent.slice(3).filter((m) => / first$/.test(m.at(-1)?.content ?? ''));
  assert.ok(firstTurns.length >= 1);
  for (const m of firstTurns)
    assert.deepEqual(
      m.map((x) => x.role),
      ['user'],
      JSON.stringify(m),
    );
  // The second turns do carry their own session's live reply (the history the check looks for exists).
  const seconds = sent.filter((m) => / second$/.test(m.at(-1)?.content ?? ''));
  assert.ok(
    seconds.length >= 1 && seconds.every((m) => m.map((x) => x.role).join() === 'user,assistant,user'),
  );
});
