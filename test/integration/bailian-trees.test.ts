/**
 * Bailian tree replay (`bailian_trace` on a fixed schedule), through the CLI against the simulator,
 * on `examples/traces/bailian_siblings_demo.jsonl` (two trees: chat 1 with three follow-ups 2, 3, 4
 * and a follow-up 5 of 3; chat 10 with two follow-ups 11, 12):
 * - by default sibling follow-ups each go once their parent's answer ended, side by side (the second
 *   sibling is sent before the first one's answer ended), streamed or read whole; records name the
 *   tree's root as `conversation_id` and `x-correlation-id`, and its `session_num`, `turn_index`
 *   the row's depth;
 * - `--bailian-linear-sessions` sends them one after the other (AIPerf's way);
 * - siblings waiting for their parent when the run stops are not sent, and the run ends;
 * - a shard holds every row of a tree, branches included;
 * - `analyze-trace` counts the follow-ups with siblings: none in the two public samples.
 * Rows are told apart by their input length (each row's is its own). The simulator answers after a
 * fixed 300 ms, so a parent's answer ends after its children's trace times (speedup 10).
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Command, CommanderError } from 'commander';
import { registerAnalyzeCommands } from '../../src/cli/analyze-action.js';
import { sessionShard } from '../../src/dataset/shard.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { type ExportedRecord, readRunArtifacts } from '../helpers/run-artifacts.js';

const MODEL = 'Qwen/Qwen3-0.6B';
const DEMO = 'examples/traces/bailian_siblings_demo.jsonl';
/** chat_id of the demo's rows by input length. */
const CHAT_OF_ISL = new Map([
  [512, 1],
  [304, 10],
  [715, 2],
  [704, 3],
  [711, 4],
  [427, 11],
  [411, 12],
  [891, 5],
]);
let sim: RunningSimulator;
let work = '';

before(async () => {
  sim = await startSimulator(
    { mode: 'fixed', ttftMs: 300, itlMs: 0, models: [MODEL] },
    { captureRequests: true },
  );
  work = mkdtempSync(join(tmpdir(), 'tokenload-trees-'));
});
after(async () => {
  await sim?.close();
});

const args = (dir: string, extra: string[]): string[] => [
  'profile',
  ...['--model', MODEL, '--endpoint-type', 'chat', '--streaming', '--url', sim.url],
  ...['--input-file', DEMO, '--custom-dataset-type', 'bailian_trace', '--fixed-schedule'],
  ...['--synthesis-speedup-ratio', '10', '--tokenizer', 'builtin', '--client-warmup-ms', '0'],
  ...['--ui', 'none', '--artifact-dir', join(work, dir), ...extra],
];

interface Sent {
  startNs: bigint;
  endNs: bigint;
  conversation: string;
  turnIndex: number;
  correlation: string;
  sessionNum: number;
}

/** Runs the demo with `extra` flags; its records by chat_id, and the x-correlation-ids the server saw. */
async function replay(
  dir: string,
  extra: string[],
): Promise<{ rows: Map<number, Sent>; correlations: string[] }> {
  const seen = sim.capturedRequests().length;
  const r = await runCliInProcess(args(dir, extra));
  assert.equal(r.code, 0, r.stderr);
  const rows = new Map<number, Sent>();
  for (const rec of readRunArtifacts(join(work, dir)).records) {
    assert.equal(rec.error, null);
    rows.set(chatOf(rec), sentOf(rec));
  }
  const correlations = sim
    .capturedRequests()
    .slice(seen)
    .map((c) => String(c.headers['x-correlation-id']));
  return { rows, correlations };
}

function chatOf(rec: ExportedRecord): number {
  const chat = CHAT_OF_ISL.get(rec.metrics.input_sequence_length?.value as number);
  assert.ok(chat !== undefined, JSON.stringify(rec.metrics.input_sequence_length));
  return chat;
}

function sentOf(rec: ExportedRecord): Sent {
  const m = rec.metadata;
  return {
    startNs: BigInt(m.request_start_ns as string),
    endNs: BigInt(m.request_end_ns as string),
    conversation: m.conversation_id as string,
    turnIndex: m.turn_index,
    correlation: m.x_correlation_id as string,
    sessionNum: m.session_num as number,
  };
}

function row(rows: Map<number, Sent>, chat: number): Sent {
  const sent = rows.get(chat);
  assert.ok(sent !== undefined, `chat ${chat} was sent`);
  return sent;
}

/** `child` went after `parent`'s answer ended. */
function after_(rows: Map<number, Sent>, child: number, parent: number): void {
  assert.ok(
    row(rows, child).startNs >= row(rows, parent).endNs,
    `chat ${child} sent after chat ${parent} ended`,
  );
}

/** `later` went before `earlier`'s answer ended: it did not wait for it. */
function beside(rows: Map<number, Sent>, later: number, earlier: number): void {
  assert.ok(
    row(rows, later).startNs < row(rows, earlier).endNs,
    `chat ${later} sent before chat ${earlier} ended`,
  );
}

test('tree replay (the default): siblings go side by side once their parent ended, streamed or read whole', async () => {
  for (const streaming of ['--trace-streaming', '--no-trace-streaming']) {
    const { rows, correlations } = await replay(`tree${streaming}`, [streaming]);
    assert.equal(rows.size, CHAT_OF_ISL.size, streaming);
    for (const [child, parent] of [
      [2, 1],
      [3, 1],
      [4, 1],
      [5, 3],
      [11, 10],
      [12, 10],
    ] as const)
      after_(rows, child, parent);
    beside(rows, 3, 2);
    beside(rows, 4, 2);
    beside(rows, 12, 11);
    const ids = [...rows].map(([chat, s]) => [chat, s.conversation, s.turnIndex, s.correlation]);
    assert.deepEqual(
      ids.sort((a, b) => (a[0] as number) - (b[0] as number)),
      [
        [1, '1', 0, '1'],
        [2, '1', 1, '1'],
        [3, '1', 1, '1'],
        [4, '1', 1, '1'],
        [5, '1', 2, '1'],
        [10, '10', 0, '10'],
        [11, '10', 1, '10'],
        [12, '10', 1, '10'],
      ],
      streaming,
    );
    assert.deepEqual(correlations.sort(), ['1', '1', '1', '1', '1', '10', '10', '10']);
    // A tree is one session for session_num (and the server it goes to).
    const numbers = new Set([...rows.values()].map((s) => `${s.conversation}:${s.sessionNum}`));
    assert.equal(numbers.size, 2, [...numbers].join(' '));
    // Chats 3 and 4 (siblings of 2) and 12 (of 11) start branches: counted in the replay section.
    const { summary } = readRunArtifacts<{ replay: { sessions: number; branch_sessions: number } }>(
      join(work, `tree${streaming}`),
    );
    assert.deepEqual([summary.replay.sessions, summary.replay.branch_sessions], [5, 3], streaming);
  }
});

test('--bailian-linear-sessions: siblings go one after the other, as AIPerf sends them', async () => {
  const { rows } = await replay('linear', ['--bailian-linear-sessions']);
  assert.equal(rows.size, CHAT_OF_ISL.size);
  const { summary } = readRunArtifacts<{ replay: { sessions: number; branch_sessions: number } }>(
    join(work, 'linear'),
  );
  assert.deepEqual([summary.replay.sessions, summary.replay.branch_sessions], [2, 0]);
  after_(rows, 3, 2);
  after_(rows, 4, 3);
  after_(rows, 5, 4);
  after_(rows, 12, 11);
});

test('a run stopped while siblings wait for their parent: they are not sent, and the run ends', async () => {
  // Chats 3 and 4 are due at 60 and 70 ms and wait for chat 1, whose answer ends after the 0.1 s.
  const { rows } = await replay('stopped', ['--benchmark-duration', '0.1']);
  assert.deepEqual(
    [...rows.keys()].sort((a, b) => a - b),
    [1, 10],
  );
});

test('a shard holds its trees whole: the branches of tree 1 go with its root', async () => {
  // A shard count where a branch's own session id would hash elsewhere than its root's.
  const count = [2, 3, 4, 5, 6, 7, 8].find((n) => sessionShard('1/3', n) !== sessionShard('1', n)) as number;
  const index = sessionShard('1', count);
  const { rows } = await replay('shard', ['--shard-index', String(index), '--shard-count', String(count)]);
  const tree = [...rows].filter(([, s]) => s.conversation === '1').map(([chat]) => chat);
  assert.deepEqual(tree.sort(), [1, 2, 3, 4, 5]);
});

test('analyze-trace counts follow-ups with siblings: none in the public samples, five under two parents in the demo', async () => {
  const siblings = async (file: string): Promise<unknown> => {
    let out = '';
    let code = 0;
    const program = new Command('tokenload').exitOverride().configureOutput({ writeErr: () => undefined });
    const io = {
      out: (t: string): void => {
        out += t;
      },
      err: (): void => undefined,
    };
    registerAnalyzeCommands(
      program,
      (c) => {
        code = c;
      },
      io,
    );
    try {
      await program.parseAsync([
        'node',
        'tokenload',
        'analyze-trace',
        file,
        '--custom-dataset-type',
        'bailian_trace',
        '--json',
      ]);
    } catch (e) {
      if (!(e instanceof CommanderError)) throw e;
      code = 2;
    }
    assert.equal(code, 0);
    return (JSON.parse(out) as { siblings: unknown }).siblings;
  };
  const none = { rowsWithSiblings: 0, branchingParents: 0 };
  assert.deepEqual(await siblings('examples/traces/bailian_traceA_multiturn_head40.jsonl'), none);
  assert.deepEqual(await siblings('examples/traces/bailian_traceA_stratified_head24.jsonl'), none);
  // Chats 2, 3, 4 under chat 1 and 11, 12 under chat 10.
  assert.deepEqual(await siblings(DEMO), { rowsWithSiblings: 5, branchingParents: 2 });
});

test('--no-open-loop-replay: each follow-up, sibling branches included, goes its recorded gap after its parent ended', async () => {
  const { rows } = await replay('closed', ['--no-open-loop-replay']);
  const ms = 1_000_000n;
  // Recorded gaps after the speedup of 10: child ts − parent ts.
  for (const [child, parent, gapMs] of [
    [2, 1, 50n],
    [3, 1, 60n],
    [4, 1, 70n],
    [11, 10, 70n],
    [12, 10, 80n],
    [5, 3, 140n],
  ] as const) {
    assert.ok(
      row(rows, child).startNs >= row(rows, parent).endNs + gapMs * ms,
      `chat ${child} sent ${gapMs} ms or more after chat ${parent} ended`,
    );
  }
  // Siblings still run side by side: the second went before the first's answer ended.
  assert.ok(row(rows, 3).startNs < row(rows, 2).endNs);
});
