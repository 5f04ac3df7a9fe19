/**
 * A fixed-schedule replay of synthesized (Mooncake `input_length` + `hash_ids`) prompts, as a user
 * checks it: the simulator receives each prompt with exactly its `input_length` tokens, later turns
 * of a session carry the earlier prompt and the live reply word for word, inputs.json holds the
 * bodies the simulator received, and a burst that finds every connection busy goes out on
 * connections opened ahead of it (the summary's `connections` section).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import { loadTokenizer } from '../../src/prompt/tokenizer.js';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';

const SILENT = { info: () => undefined, warn: () => undefined };

interface Body {
  messages?: Array<{ role: string; content: string }>;
  prompt?: string;
}

function config(dir: string, url: string, trace: string, over: Partial<ProfileConfig>): ProfileConfig {
  return profileConfig({
    models: ['sim-model'],
    tokenizer: 'builtin',
    url,
    streaming: true,
    inputFile: trace,
    customDatasetType: 'mooncake_trace',
    fixedSchedule: true,
    randomSeed: 3,
    requestTimeoutSeconds: 30,
    artifactDir: dir,
    gracePeriodSeconds: 5,
    clientWarmupMs: 0,
    commandLine: 'test',
    ...over,
  });
}

function writeTrace(dir: string, rows: object[]): string {
  const path = join(dir, 'trace.jsonl');
  writeFileSync(path, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return path;
}

async function replay(
  sim: RunningSimulator,
  rows: object[],
  over: Partial<ProfileConfig> = {},
): Promise<{ dir: string; bodies: Body[]; raw: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-bursts-'));
  await runProfile(config(dir, sim.url, writeTrace(dir, rows), over), {
    log: SILENT,
    stopSignal: new AbortController().signal,
  });
  const raw = sim.capturedRequests().map((r) => r.body);
  return { dir, bodies: raw.map((b) => JSON.parse(b) as Body), raw };
}

/** A two-turn session of long prompts (40 blocks of 512 tokens plus a tail), then a one-turn one. */
const SESSION_ROWS = [
  { session_id: 'a', timestamp: 0, input_length: 40 * 512 + 700, output_length: 3, hash_ids: ids(0, 40) },
  { session_id: 'a', timestamp: 10, input_length: 1100, output_length: 2, hash_ids: [0, 1, 90] },
  { session_id: 'b', timestamp: 5, input_length: 900, output_length: 2, hash_ids: [0, 91] },
];

function ids(from: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => from + i);
}

test('synthesized prompts reach the server exactly: their input_length in tokens, history word for word, inputs.json the same bodies', async () => {
  const tokenizer = loadTokenizer();
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 }, { captureRequests: true });
  try {
    const { dir, bodies, raw } = await replay(sim, SESSION_ROWS);
    assert.equal(bodies.length, 3);
    for (const text of raw) assert.ok(!text.includes('\\u0000'), 'no placeholder left in a body');
    // Bodies arrive in any order (a long one takes longer to read): told apart by their messages.
    const lists = bodies.map((b) => b.messages ?? []);
    const byTokens = (n: number) =>
      lists.find((m) => m.length === 1 && tokenizer.count(m[0]?.content ?? '') === n);
    const first = byTokens(40 * 512 + 700);
    const third = byTokens(900);
    const second = lists.find((m) => m.length === 3);
    assert.ok(first !== undefined && second !== undefined && third !== undefined);
    // Turn 2 of session a: turn 1's prompt as sent, turn 1's live reply, then its own prompt.
    assert.deepEqual(
      second.map((m) => m.role),
      ['user', 'assistant', 'user'],
    );
    assert.equal(second[0]?.content, first.at(-1)?.content);
    assert.equal(tokenizer.count(second[2]?.content ?? ''), 1100);
    // Shared hash ids 0 and 1: the first two blocks (1,024 words) are the same text in every prompt.
    const prefix = (text: string): string => text.split(' ').slice(0, 1025).join(' ');
    assert.equal(prefix(second[2]?.content ?? ''), prefix(first[0]?.content ?? ''));
    const inputs = JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8')) as {
      data: Array<{ session_id: string; payloads: Body[] }>;
    };
    const written = inputs.data.flatMap((entry) => entry.payloads);
    assert.deepEqual(
      written.map((b) => JSON.stringify(b)).sort(),
      bodies.map((b) => JSON.stringify(b)).sort(),
    );
  } finally {
    await sim.close();
  }
});

test('completions: a synthesized prompt joined with its history is sent whole', async () => {
  const tokenizer = loadTokenizer();
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 }, { captureRequests: true });
  try {
    const { bodies } = await replay(sim, SESSION_ROWS.slice(0, 2), { endpointType: 'completions' });
    assert.equal(bodies.length, 2);
    const [first, second] = bodies.map((b) => b.prompt ?? '');
    assert.equal(tokenizer.count(first ?? ''), 40 * 512 + 700);
    const parts = (second ?? '').split('\n\n');
    assert.equal(parts.length, 3);
    assert.equal(parts[0], first);
    assert.equal(tokenizer.count(parts[2] ?? ''), 1100);
  } finally {
    await sim.close();
  }
});

test('a burst that finds every connection busy goes out on connections opened ahead of it', async () => {
  // The first four requests hold their connections for 3 s; the next four are due at 1.5 s.
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 3000, itlMs: 1 });
  const row = (ts: number) => ({ timestamp: ts, input_length: 600, output_length: 1, hash_ids: [7, 8] });
  const rows = [0, 0, 0, 0, 1500, 1500, 1500, 1500].map(row);
  try {
    const { dir } = await replay(sim, rows, { prewarmConnections: 4 });
    const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as {
      connections: { requests_on_new_connections: number; requests_on_open_connections: number };
    };
    assert.equal(summary.connections.requests_on_open_connections, 8);
    assert.equal(summary.connections.requests_on_new_connections, 0);
    const lines = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n');
    for (const line of lines) {
      const record = JSON.parse(line) as {
        metadata: { connection_reused: boolean };
        metrics: Record<string, unknown>;
      };
      assert.equal(record.metadata.connection_reused, true);
      assert.equal(record.metrics.connect_time, undefined);
    }
  } finally {
    await sim.close();
  }
});
