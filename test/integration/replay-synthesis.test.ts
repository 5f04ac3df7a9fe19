/**
 * Issue #17: AIPerf's trace-synthesis flags on `profile`, against the built-in simulator. The
 * multi-turn Bailian sample replayed with a set of `--synthesis-*` flags sends exactly what the
 * `tokenload synthesize-trace` output of the same flags sends when replayed without them (same
 * `--random-seed`): the same request bodies (inputs.json) on the same schedule, streamed and loaded
 * whole. Rows that shared blocks share the scaled prompt prefix byte for byte, and every prompt has
 * exactly the scaled input_length. Max ISL drops and max OSL caps are counted in the summary and on
 * the console.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { runProfile } from '../../src/run/profile.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { simulatorReplayConfig } from '../helpers/replay-config.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
// 50×: the shortest gap between a turn and its follow-up (10.2 s) is 204 ms, many times what the
// simulator (FAST_SIMULATOR) takes for the parent, so every follow-up is sent at its own time, not at
// its parent's end.
const SPEEDUP = 50;

/**
 * The spawned simulator of the replays: fixed timing with no delays (the runs compare what was sent
 * and when it was due, not how fast it was answered); no warm-ups (simulatorReplayConfig).
 */
const FAST_SIMULATOR: Partial<ProfileConfig> = { simulatorOptions: { mode: 'fixed', ttftMs: 0, itlMs: 0 } };
const FAST_SIMULATOR_FLAGS = ['--simulator-option', 'mode=fixed', '--simulator-option', 'warmup-ms=0'];

/** The synthesis flags under test (shared prefix blocks × 2; three rows over 6000 tokens). */
const FLAGS: Array<[string, number]> = [
  ['--synthesis-speedup-ratio', SPEEDUP],
  ['--synthesis-prefix-len-multiplier', 2],
  ['--synthesis-prefix-root-multiplier', 2],
  ['--synthesis-prompt-len-multiplier', 1.5],
  ['--synthesis-output-len-multiplier', 0.5],
  ['--synthesis-max-isl', 6000],
  ['--synthesis-max-osl', 64],
];
const PREFIX_FACTOR = 2;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-synth-'));
  dirs.push(dir);
  return dir;
};

/** `--synthesis-prefix-len-multiplier` → `synthesisPrefixLenMultiplier`. */
const fieldOf = (flag: string): string =>
  flag.slice(2).replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

const silent = { info: () => undefined, warn: () => undefined };

async function replay(
  inputFile: string,
  speedup: number,
  overrides: Partial<ProfileConfig>,
): Promise<string> {
  const dir = tmp();
  const config = simulatorReplayConfig(dir, inputFile, speedup, {
    commandLine: 'test',
    ...FAST_SIMULATOR,
    ...overrides,
  });
  const outcome = await runProfile(config, { log: silent, stopSignal: new AbortController().signal });
  assert.equal(outcome.wasCancelled, false);
  return dir;
}

interface Sent {
  /** The request body as sent (inputs.json). */
  body: unknown;
  /** Scheduled send time − the run's first, ns. */
  offsetNs: bigint;
  isl: number;
}

/** What a run sent, by `<session>/<turn index>`: bodies from inputs.json, schedule and ISL from the records. */
function sentOf(dir: string): Map<string, Sent> {
  const inputs = JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8')) as {
    data: Array<{ session_id: string; payloads: unknown[] }>;
  };
  const bodies = new Map<string, unknown[]>();
  for (const entry of inputs.data)
    bodies.set(entry.session_id, [...(bodies.get(entry.session_id) ?? []), ...entry.payloads]);
  const lines = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  const scheduled = lines.map((l) => BigInt(/"request_scheduled_ns":(\d+)/.exec(l)?.[1] ?? '-1'));
  let first = scheduled[0] as bigint;
  for (const ns of scheduled) if (ns < first) first = ns;
  const out = new Map<string, Sent>();
  lines.forEach((line, i) => {
    const rec = JSON.parse(line) as {
      metadata: { conversation_id: string; turn_index: number };
      metrics: { input_sequence_length: { value: number } };
      error: unknown;
    };
    assert.equal(rec.error, null, line);
    const { conversation_id: sid, turn_index: k } = rec.metadata;
    out.set(`${sid}/${k}`, {
      body: bodies.get(sid)?.[k],
      offsetNs: (scheduled[i] as bigint) - first,
      isl: rec.metrics.input_sequence_length.value,
    });
  });
  return out;
}

interface Row {
  chat_id: number;
  parent_chat_id: number;
  input_length: number;
  hash_ids: number[];
}

const rowsOf = (file: string): Row[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);

/** Rows by `<root chat_id>/<turn index>` (every parent precedes its child in the sample). */
function chainsOf(rows: Row[]): Map<string, Row> {
  const rootOf = new Map<number, number>();
  const turns = new Map<number, number>();
  const out = new Map<string, Row>();
  for (const r of rows) {
    const root = rootOf.get(r.parent_chat_id) ?? r.chat_id;
    rootOf.set(r.chat_id, root);
    const k = turns.get(root) ?? 0;
    turns.set(root, k + 1);
    out.set(`${root}/${k}`, r);
  }
  return out;
}

/** The text of the first user message of a chat body. */
const promptOf = (body: unknown): string =>
  (body as { messages: Array<{ content: string }> }).messages[0]?.content ?? '';

/** The first `words` words of a prompt (the block texts are one-token words, each after a space). */
function firstWords(text: string, words: number): string {
  let seen = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) === 32 && seen++ === words) return text.slice(0, i);
  }
  return text;
}

let synthesized = '';
before(async () => {
  synthesized = join(tmp(), 'synthesized.jsonl');
  const args = FLAGS.flatMap(([flag, value]) => [flag, String(value)]);
  const r = await runCliProcess([
    'synthesize-trace',
    TRACE,
    '--custom-dataset-type',
    'bailian_trace',
    '-o',
    synthesized,
    ...args,
  ]);
  assert.equal(r.code, 0, r.stderr);
});

const flagConfig = (): Partial<ProfileConfig> =>
  Object.fromEntries(FLAGS.slice(1).map(([flag, value]) => [fieldOf(flag), value]));

async function sameAsSynthesized(streaming: boolean): Promise<Map<string, Sent>> {
  const viaFlags = await replay(TRACE, SPEEDUP, { ...flagConfig(), traceStreaming: streaming });
  const viaFile = await replay(synthesized, 1, { traceStreaming: streaming });
  const a = sentOf(viaFlags);
  const b = sentOf(viaFile);
  assert.equal(a.size, 37, 'the 40 rows less the three over --synthesis-max-isl 6000');
  assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
  for (const [key, sent] of a) {
    const other = b.get(key) as Sent;
    assert.deepEqual(sent.body, other.body, `${key}: request body`);
    assert.equal(sent.offsetNs, other.offsetNs, `${key}: scheduled offset`);
    assert.equal(sent.isl, other.isl, `${key}: ISL`);
  }
  const summary = JSON.parse(readFileSync(join(viaFlags, 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(summary.input_rows_skipped.over_max_isl, 3);
  assert.ok(summary.input_rows_skipped.max_osl_capped > 0);
  return a;
}

test('streamed replay with --synthesis-* flags sends what the synthesize-trace output sends: bodies, schedule, ISL', async () => {
  const sent = await sameAsSynthesized(true);
  // Every prompt has exactly the synthesized input_length (client ISL of the request sent).
  const rows = chainsOf(rowsOf(synthesized));
  for (const [key, s] of sent) assert.equal(s.isl, rows.get(key)?.input_length, key);
  // A follow-up turn shares its parent's scaled prefix byte for byte: p whole blocks shared in the
  // trace are 2p blocks (16 one-token words each) after synthesis (the prompt-len multiplier scales
  // only the rest of a row).
  const original = chainsOf(rowsOf(TRACE));
  let pairs = 0;
  for (const [key, child] of original) {
    const [root, k] = key.split('/') as [string, string];
    const parent = original.get(`${root}/${Number(k) - 1}`);
    if (parent === undefined || !sent.has(key)) continue;
    let shared = 0;
    while (shared < parent.hash_ids.length - 1 && parent.hash_ids[shared] === child.hash_ids[shared])
      shared++;
    const words = shared * PREFIX_FACTOR * 16;
    const a = firstWords(promptOf(sent.get(`${root}/${Number(k) - 1}`)?.body), words);
    const b = firstWords(promptOf(sent.get(key)?.body), words);
    assert.equal(a.split(' ').length - 1, words, `${key}: the parent's prompt holds the scaled prefix`);
    assert.equal(b, a, `${key}: shares its parent's scaled prefix`);
    pairs++;
  }
  assert.ok(pairs >= 10, `${pairs} parent/child pairs checked`);
});

test('whole-file replay (--no-trace-streaming) with the flags sends what the synthesized file sends', async () => {
  await sameAsSynthesized(false);
});

test('--synthesis-max-isl drops and --synthesis-max-osl caps, both counted in the summary and on the console', async () => {
  const dir = tmp();
  const trace = join(dir, 'trace.jsonl');
  const row = (chat: number, isl: number, osl: number, ts: number): string =>
    JSON.stringify({
      chat_id: chat,
      parent_chat_id: -1,
      timestamp: ts,
      input_length: isl,
      output_length: osl,
      type: 'text',
      turn: 1,
      hash_ids: Array.from({ length: Math.ceil(isl / 16) }, (_v, i) => chat * 100 + i),
    });
  writeFileSync(trace, `${[row(1, 40, 8, 0), row(2, 400, 8, 0.1), row(3, 40, 30, 0.2)].join('\n')}\n`);
  const out = join(dir, 'out');
  const r = await runCliProcess([
    'profile',
    '--simulator',
    ...FAST_SIMULATOR_FLAGS,
    '--client-warmup-ms',
    '0',
    '-m',
    'Qwen/Qwen3-0.6B',
    '--input-file',
    trace,
    '--custom-dataset-type',
    'bailian_trace',
    '--synthesis-max-isl',
    '100',
    '--synthesis-max-osl',
    '10',
    '--random-seed',
    '3',
    '--artifact-dir',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /rows over --synthesis-max-isl dropped 1; output lengths capped at --synthesis-max-osl 1/,
  );
  const summary = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(summary.request_count.avg, 2);
  assert.equal(summary.input_rows_skipped.over_max_isl, 1);
  assert.equal(summary.input_rows_skipped.max_osl_capped, 1);
  const inputs = readFileSync(join(out, 'inputs.json'), 'utf8');
  assert.deepEqual(
    [...inputs.matchAll(/"max_completion_tokens":(\d+)/g)].map((m) => Number(m[1])),
    [8, 10],
  );
});

/** The ideal prefix-hit figures `analyze-trace --json` reports for the sample with `flags`. */
async function prefixHitWith(...flags: string[]): Promise<Record<string, number>> {
  const r = await runCliProcess([
    'analyze-trace',
    TRACE,
    '--custom-dataset-type',
    'bailian_trace',
    '--json',
    ...flags,
  ]);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { prefix: Record<string, number> }).prefix;
}

test('--synthesis-prefix-len-multiplier 2 stretches the shared prefixes only; --synthesis-prompt-len-multiplier 2 lengthens prompts, not their shared prefixes (analyze-trace)', async () => {
  const plain = await prefixHitWith();
  const prefix2 = await prefixHitWith('--synthesis-prefix-len-multiplier', '2');
  const prompt2 = await prefixHitWith('--synthesis-prompt-len-multiplier', '2');
  // Every block an earlier request already sent is a shared block, and becomes two shared blocks.
  assert.equal(prefix2.hitBlocks, 2 * (plain.hitBlocks as number));
  assert.ok(
    (prefix2.tokenHitRatio as number) > (plain.tokenHitRatio as number),
    'prefix-len raises the token hit ratio',
  );
  assert.ok(
    (prefix2.blockHitRatio as number) > (plain.blockHitRatio as number),
    'prefix-len raises the block hit ratio',
  );
  // The prompt-len multiplier scales what no other row shares: the same hits in longer prompts.
  assert.equal(prompt2.hitTokens, plain.hitTokens);
  assert.equal(prompt2.hitBlocks, plain.hitBlocks);
  assert.ok((prompt2.totalTokens as number) > (plain.totalTokens as number), 'prompt-len lengthens prompts');
  assert.ok((prompt2.tokenHitRatio as number) < (plain.tokenHitRatio as number));
});
