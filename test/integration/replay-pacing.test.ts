/**
 * How a fixed-schedule replay paces a session's later turns, through the CLI (in process) against the
 * simulator, whose answers take about 300 ms (fixed mode: 300 ms to the first token, 2 tokens):
 * longer than the 200 ms between the rows of session `a`. Open loop (the default) sends a later turn
 * as soon as the previous answer ends (its timestamp has passed); `--no-open-loop-replay` (closed
 * loop) waits the recorded 200 ms after each answer; `--trace-idle-gap-cap-seconds 0.5` shortens the
 * 3 s gap of session `b` and the 3 s `delay` of session `c` to 0.5 s (longer than the 200 ms gaps
 * of `a`, which it leaves alone) and counts them. Every assertion reads the records' own stamps
 * (send after the previous end + gap: no allowance that could let a wrong schedule pass) and the
 * summary; one run streams the trace, the other loads it whole, so both paths are covered. Both
 * warm-ups and the server-metrics scraper are off: the checks are on order, not on speed. The last
 * test replays one session on a virtual clock (the real strategy, test/helpers/virtual-replay.ts) for
 * the exact due times the wall clock cannot show: an open-loop cap moves all later timestamps
 * earlier, and a delay is capped too. It shares this file to save a test process's start-up.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Conversation, Turn } from '../../src/dataset/types.js';
import { readEpochNs } from '../../src/report/epoch-ns.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { virtualReplay } from '../helpers/virtual-replay.js';

const MS = 1_000_000n;
/** Session `a`: three rows 200 ms apart; `b`: two rows 3 s apart; `c`: a row, then one with a 3 s `delay`. */
const ROWS = [
  { session_id: 'a', timestamp: 0 },
  { session_id: 'b', timestamp: 100 },
  { session_id: 'c', timestamp: 150 },
  { session_id: 'a', timestamp: 200 },
  { session_id: 'c', delay: 3000 },
  { session_id: 'a', timestamp: 400 },
  { session_id: 'b', timestamp: 3100 },
];
const A_GAP_MS = 200n;
const B_GAP_MS = 3000n;
const C_DELAY_MS = 3000n;
const CAP_S = 0.5;

let sim: RunningSimulator;
let trace: string;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 300, itlMs: 1, tokenizer: 'builtin', warmupMs: 0 });
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-pacing-'));
  trace = join(dir, 'trace.jsonl');
  const lines = ROWS.map((r, i) =>
    JSON.stringify({ ...r, input_length: 16, output_length: 2, hash_ids: [i] }),
  );
  writeFileSync(trace, `${lines.join('\n')}\n`);
});
after(() => sim.close());

/** The parts of profile_export_aiperf.json these tests read. */
interface Summary {
  load: { description: string };
  replay: {
    open_loop: boolean;
    turns_behind_answer: { count: number; mean_ms: number; max_ms: number } | null;
    idle_gap_cap: { cap_s: number; rows_capped: number; removed_ms: number };
  };
}

interface Stamps {
  scheduled: bigint;
  start: bigint;
  end: bigint;
}

/** Runs the replay with `extra`; returns each session's requests by turn, the summary, and stderr. */
async function replay(extra: readonly string[]): Promise<{
  turns: Map<string, Stamps[]>;
  summary: Summary;
  stderr: string;
}> {
  const out = mkdtempSync(join(tmpdir(), 'tokenload-pacing-run-'));
  const { code, stderr } = await runCliInProcess([
    'profile',
    ...['--model', 'Qwen/Qwen3-0.6B', '--tokenizer', 'builtin', '--streaming', '--url', sim.url],
    ...['--input-file', trace, '--custom-dataset-type', 'mooncake_trace'],
    ...['--artifact-dir', out, '--ui', 'none', '--client-warmup-ms', '0', '--no-server-metrics', ...extra],
  ]);
  assert.equal(code, 0, stderr);
  const turns = new Map<string, Stamps[]>();
  for (const line of readFileSync(join(out, 'profile_export.jsonl'), 'utf8').trim().split('\n')) {
    // Epoch ns exceed 2^53: read exactly, as the report does.
    const m = JSON.parse(line).metadata;
    const stamp = (field: string): bigint => readEpochNs(line, field) ?? assert.fail(`${field} missing`);
    const list = turns.get(m.conversation_id) ?? [];
    list[m.turn_index] = {
      scheduled: stamp('request_scheduled_ns'),
      start: stamp('request_start_ns'),
      end: stamp('request_end_ns'),
    };
    turns.set(m.conversation_id, list);
  }
  const summary = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8')) as Summary;
  return { turns, summary, stderr };
}

const CAP_NS = BigInt(CAP_S * 1000) * MS;

/** Session `c`'s delayed row goes after the cap, and before its whole delay, in either mode. */
function assertDelayCapped(turns: Map<string, Stamps[]>): void {
  const [c0, c1] = turnsOf(turns, 'c', 2) as [Stamps, Stamps];
  assert.ok(c1.start >= c0.end + CAP_NS, 'c1 sent ≥ the cap after c0 ended');
  assert.ok(c1.start < c0.end + C_DELAY_MS * MS, 'c1 sent before its whole delay');
}

const turnsOf = (turns: Map<string, Stamps[]>, id: string, n: number): Stamps[] => {
  const list = turns.get(id) ?? [];
  assert.equal(list.filter(Boolean).length, n, `session ${id}: ${n} requests`);
  return list;
};

test('open loop (default): a later turn whose time has passed goes at the previous answer’s end; a capped gap goes early', async () => {
  const { turns, summary, stderr } = await replay(['--trace-idle-gap-cap-seconds', String(CAP_S)]);
  const a = turnsOf(turns, 'a', 3);
  for (const k of [1, 2]) {
    const prev = a[k - 1] as Stamps;
    const cur = a[k] as Stamps;
    // The answer took longer than the gap, so the turn's own time had passed: due at the end.
    assert.ok(prev.end - prev.start > A_GAP_MS * MS, 'answers take longer than the gap');
    assert.ok(cur.scheduled >= prev.end, `a${k} scheduled after a${k - 1} ended`);
    assert.ok(cur.scheduled < prev.end + A_GAP_MS * MS, `a${k} not held back by the gap (open loop)`);
  }
  const b = turnsOf(turns, 'b', 2);
  const [b0, b1] = b as [Stamps, Stamps];
  assert.ok(b1.start >= b0.end, 'b1 after b0 ended');
  assert.ok(b1.start < b0.start + B_GAP_MS * MS, 'b1 sent before its uncapped time');
  assertDelayCapped(turns);
  assert.equal(summary.replay.open_loop, true);
  assert.equal(summary.replay.idle_gap_cap.cap_s, CAP_S);
  assert.equal(summary.replay.idle_gap_cap.rows_capped, 2);
  const removedMs = Number(B_GAP_MS + C_DELAY_MS) - 2 * CAP_S * 1000;
  assert.equal(summary.replay.idle_gap_cap.removed_ms, removedMs);
  assert.match(stderr, /idle-gap cap 0\.5 s \(--trace-idle-gap-cap-seconds\): 2 rows: their gaps/);
  // a1 and a2 went at their previous answer's end, after their own time: counted, by how much.
  const behind = summary.replay.turns_behind_answer;
  assert.ok(behind !== null && behind.count >= 2 && behind.max_ms > 0, JSON.stringify(behind));
  assert.match(stderr, /open loop: \d+ later turns went when the previous answer of their session ended/);
  assert.match(summary.load.description, /gaps within a session capped at 0\.5 s/);
  assert.doesNotMatch(summary.load.description, /closed loop/);
});

test('closed loop (--no-open-loop-replay, trace loaded whole): each later turn after the previous end + its gap, capped', async () => {
  const { turns, summary, stderr } = await replay([
    '--no-open-loop-replay',
    '--no-trace-streaming',
    ...['--trace-idle-gap-cap-seconds', String(CAP_S)],
  ]);
  const a = turnsOf(turns, 'a', 3);
  for (const k of [1, 2]) {
    const prev = a[k - 1] as Stamps;
    assert.ok(
      (a[k] as Stamps).start >= prev.end + A_GAP_MS * MS,
      `a${k} sent ≥ 200 ms after a${k - 1} ended`,
    );
  }
  const [b0, b1] = turnsOf(turns, 'b', 2) as [Stamps, Stamps];
  assert.ok(b1.start >= b0.end + CAP_NS, 'b1 sent ≥ the cap after b0 ended');
  assert.ok(b1.start < b0.end + B_GAP_MS * MS, 'b1 sent before its uncapped think time');
  assertDelayCapped(turns);
  assert.equal(summary.replay.open_loop, false);
  assert.equal(summary.replay.turns_behind_answer, null, 'closed loop: a turn always follows its answer');
  assert.equal(summary.replay.idle_gap_cap.rows_capped, 2);
  assert.match(stderr, /profiling: fixed schedule \(.*closed loop/);
  assert.match(summary.load.description, /closed loop/);
});

test('the pacing flags need a fixed schedule, and the cap a positive number; the system-wide cap is refused', async () => {
  const base = [
    'profile',
    '-m',
    'm',
    '--url',
    sim.url,
    '--input-file',
    trace,
    '--custom-dataset-type',
    'mooncake_trace',
  ];
  for (const [flags, reason] of [
    [
      ['--no-fixed-schedule', '--no-open-loop-replay'],
      /--no-open-loop-replay chooses when a trace replay sends/,
    ],
    [
      ['--no-fixed-schedule', '--trace-idle-gap-cap-seconds', '1'],
      /--trace-idle-gap-cap-seconds shortens the gaps/,
    ],
    [['--trace-idle-gap-cap-seconds', '0'], /--trace-idle-gap-cap-seconds/],
    [['--system-idle-gap-cap-seconds', '5'], /--system-idle-gap-cap-seconds.*not implemented/],
  ] as const) {
    const { code, stderr } = await runCliInProcess([...base, ...flags]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, reason);
  }
});

/** A turn at `timestampMs` or after `delayMs` (one of them), for a virtual replay. */
function turn(index: number, at: { timestampMs?: number; delayMs?: number }): Turn {
  return { index, ...at, prompt: { kind: 'text', text: 'x' }, source: { file: 't.jsonl', line: index + 1 } };
}

test('on a virtual clock: the cap moves a session’s later timestamps earlier (open loop), caps think time and delays (closed)', async () => {
  // One session: rows at 0, 3000 and 3200 ms, then a 2 s delay; answers take 50 ms; cap 500 ms.
  const conversations: Conversation[] = [
    {
      id: 's',
      contextMode: 'message_array_with_responses',
      turns: [
        turn(0, { timestampMs: 0 }),
        turn(1, { timestampMs: 3000 }),
        turn(2, { timestampMs: 3200 }),
        turn(3, { delayMs: 2000 }),
      ],
    },
  ];
  const run = async (openLoop: boolean) => {
    const fresh = structuredClone(conversations);
    const { sent, result } = await virtualReplay({
      conversations: fresh,
      zeroMs: 0,
      durationMs: () => 50,
      pacing: { openLoop, idleGapCapMs: 500 },
    });
    return { at: sent.map((s) => s.sentMs), cap: result.pacing.idleGapCap };
  };
  // Open loop: the 3 s gap becomes 500 ms (row 1 at 500), the next row keeps its 200 ms after it (700),
  // the delay is capped from row 2's end (750 + 500).
  const open = await run(true);
  assert.deepEqual(open.at, [0, 500, 700, 1250]);
  assert.deepEqual(open.cap, { capMs: 500, rowsCapped: 2, removedMs: 2500 + 1500 });
  // Closed loop: each after the previous end (+50) plus its capped gap.
  const closed = await run(false);
  assert.deepEqual(closed.at, [0, 550, 800, 1350]);
  assert.deepEqual(closed.cap, { capMs: 500, rowsCapped: 2, removedMs: 2500 + 1500 });
});
