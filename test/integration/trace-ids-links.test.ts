/**
 * Trace ids and parent links as a replay against the built-in simulator shows them.
 * - 64-bit `hash_ids`: a Bailian trace whose ids are beyond 2^53 replays with exactly the prefix
 *   cache hits the simulator reports for the same trace written with small ids: rows sharing a big id
 *   share the prefix, ids differing only beyond 2^53 do not.
 * - `parent_chat_id` naming a later row, a chat_id never read or one outside the offset window, and
 *   a repeated `chat_id`: the streamed replay and `--no-trace-streaming` form the same sessions, and
 *   both warn naming the rows.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { runProfile } from '../../src/run/profile.js';
import { type SpawnedSimulator, spawnSimulator } from '../../src/simulator/spawn.js';
import { simulatorReplayConfig } from '../helpers/replay-config.js';

interface RecordLine {
  metadata: { conversation_id: string; turn_index: number };
  metrics: Record<string, { value: number }>;
  error: unknown;
}

const silent = { info: (): void => undefined, warn: (): void => undefined };

function writeTrace(name: string, lines: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tokenload-ids-links-')), name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

async function replay(trace: string, overrides: Partial<ProfileConfig> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-ids-links-run-'));
  const config = simulatorReplayConfig(dir, trace, 1, { commandLine: 'test', ...overrides });
  const outcome = await runProfile(config, { log: silent, stopSignal: new AbortController().signal });
  const records = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RecordLine);
  for (const r of records) assert.equal(r.error, null, JSON.stringify(r.error));
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as {
    warnings: string[];
  };
  return { outcome, records, summary };
}

/**
 * The simulator the session and warning tests share (they read sessions and warnings, not what the
 * server cached): one start-up for six runs. The 64-bit ids test starts its own for each run, so
 * that each run's cache hits are its own.
 */
let shared: SpawnedSimulator | undefined;
before(async () => {
  shared = await spawnSimulator({ warmupMs: 0 });
});
after(async () => {
  await shared?.close();
});

/** A replay's overrides that point it at the shared simulator. */
const onShared = (overrides: Partial<ProfileConfig>): Partial<ProfileConfig> => ({
  ...overrides,
  simulator: false,
  url: [shared?.url ?? ''],
});

/** Bailian row, written as text so that ids keep every digit. */
function bailianRow(
  chatId: number,
  parentId: number,
  timestampS: number,
  inputLength: number,
  ids: string,
): string {
  return `{"chat_id": ${chatId}, "parent_chat_id": ${parentId}, "timestamp": ${timestampS}, "input_length": ${inputLength}, "output_length": 4, "type": "text", "turn": ${parentId === -1 ? 1 : 2}, "hash_ids": [${ids}]}`;
}

/** Cached prompt tokens the simulator reported, by session (each row is one: its chat_id). */
function cachedByRow(records: readonly RecordLine[]): Map<string, number> {
  return new Map(
    records.map((r) => [r.metadata.conversation_id, r.metrics.usage_cached_tokens?.value as number]),
  );
}

test('64-bit hash_ids: the simulator caches exactly as for the same trace in small ids', async () => {
  // Blocks A B C D E of 16 tokens (plus an 8-token fresh tail): equal letters share a block. Big ids:
  // A = 2^53, B = 2^53 + 1, C = 2^64 − 1, D = 2^64 − 2, E = 2^63, so rows 3 and 4 differ from row 1
  // only beyond 2^53 (A vs B first, C vs D third).
  const layouts = ['A,B,C,E', 'A,B,C,E', 'B,A,C,E', 'A,B,D,E'];
  const trace = (ids: Record<string, string>): string =>
    writeTrace(
      'trace.jsonl',
      layouts.map((layout, i) =>
        bailianRow(
          i + 1,
          -1,
          i * 0.3,
          72,
          layout
            .split(',')
            .map((k) => ids[k])
            .join(', '),
        ),
      ),
    );
  const big = await replay(
    trace({
      A: '9007199254740992',
      B: '9007199254740993',
      C: '18446744073709551615',
      D: '18446744073709551614',
      E: '9223372036854775808',
    }),
  );
  const small = await replay(trace({ A: '1', B: '2', C: '3', D: '4', E: '5' }));
  const cached = cachedByRow(big.records);
  assert.deepEqual(cached, cachedByRow(small.records));
  assert.ok((cached.get('2') ?? 0) > 0, 'row 2 repeats row 1: its prefix is cached');
  assert.equal(cached.get('3'), 0, 'row 3 differs from row 1 in its first block, beyond 2^53 only');
  const four = cached.get('4') ?? 0;
  assert.ok(four > 0 && four < (cached.get('2') ?? 0), 'row 4 shares two blocks of row 1, not four');
});

test('a parent named later in the file or never read: same sessions streamed or not, and a warning naming the rows', async () => {
  const trace = writeTrace('links.jsonl', [
    bailianRow(10, -1, 0, 41, '1'),
    bailianRow(11, 10, 0.2, 42, '1, 2'),
    bailianRow(20, 21, 0.3, 43, '5'),
    bailianRow(21, -1, 0.4, 44, '6'),
    bailianRow(30, 99, 0.5, 45, '7'),
    bailianRow(12, 11, 0.8, 46, '1, 2, 3'),
  ]);
  const expected = [
    [41, '10', 0],
    [42, '10', 1],
    [43, '20', 0],
    [44, '21', 0],
    [45, '30', 0],
    [46, '10', 2],
  ];
  const warning =
    '2 rows name a parent_chat_id that is not an earlier row stamped no later, so each was replayed as a ' +
    'session of its own: chat_id 20 (line 3): its parent 21 comes later in the file; ' +
    'chat_id 30 (line 5): no row with chat_id 99 was read';
  for (const traceStreaming of [true, false]) {
    const run = await replay(trace, onShared({ traceStreaming }));
    const sessions = run.records
      .map((r) => [r.metrics.input_sequence_length?.value, r.metadata.conversation_id, r.metadata.turn_index])
      .sort((a, b) => (a[0] as number) - (b[0] as number));
    assert.deepEqual(sessions, expected, `traceStreaming ${traceStreaming}`);
    assert.ok(run.summary.warnings.includes(warning), run.summary.warnings.join('\n'));
    assert.ok(run.outcome.consoleText.includes(`Warning: ${warning}`), run.outcome.consoleText);
  }
});

/** The sessions of a replay as [input length, conversation id, turn index], by input length. */
function sessionsOf(records: readonly RecordLine[]): unknown[][] {
  return records
    .map((r) => [r.metrics.input_sequence_length?.value, r.metadata.conversation_id, r.metadata.turn_index])
    .sort((a, b) => (a[0] as number) - (b[0] as number));
}

test('a repeated chat_id: a row with parent -1 starts its own session, a child follows the latest such row, one warning', async () => {
  const trace = writeTrace('dup.jsonl', [
    bailianRow(1, -1, 0, 41, '1'),
    bailianRow(1, -1, 0.1, 42, '3'),
    bailianRow(2, 1, 0.2, 43, '3, 4'),
    bailianRow(7, -1, 0.3, 44, '9'),
    bailianRow(7, -1, 0.4, 45, '10'),
  ]);
  const expected = [
    [41, '1', 0],
    [42, '1@2', 0],
    [43, '1@2', 1],
    [44, '7', 0],
    [45, '7@5', 0],
  ];
  const warning =
    "2 rows repeat an earlier row's chat_id (a row with parent_chat_id -1 still starts a session of its own; " +
    'a row naming that chat_id as parent follows the latest earlier row with it): chat_id 1 (line 2); chat_id 7 (line 5)';
  for (const traceStreaming of [true, false]) {
    const run = await replay(trace, onShared({ traceStreaming }));
    assert.deepEqual(sessionsOf(run.records), expected, `traceStreaming ${traceStreaming}`);
    assert.ok(run.summary.warnings.includes(warning), run.summary.warnings.join('\n'));
    assert.ok(run.outcome.consoleText.includes(`Warning: ${warning}`), run.outcome.consoleText);
  }
});

test('a parent outside the offset window: the warning names the window, streamed or not', async () => {
  const trace = writeTrace('window.jsonl', [
    bailianRow(1, -1, 0, 41, '1'),
    bailianRow(2, 1, 1, 42, '1, 2'),
    bailianRow(3, -1, 1.5, 43, '5'),
  ]);
  const warning =
    '1 row names a parent_chat_id that is not an earlier row stamped no later, so it was replayed as a ' +
    'session of its own: chat_id 2 (line 2): its parent 1 is outside the offset window ' +
    '(--fixed-schedule-start-offset / --fixed-schedule-end-offset)';
  for (const traceStreaming of [true, false]) {
    const run = await replay(trace, onShared({ traceStreaming, fixedScheduleStartOffsetMs: 500 }));
    assert.deepEqual(sessionsOf(run.records), [
      [42, '2', 0],
      [43, '3', 0],
    ]);
    assert.ok(run.summary.warnings.includes(warning), run.summary.warnings.join('\n'));
  }
});
