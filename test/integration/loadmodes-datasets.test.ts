/**
 * Each custom dataset type end to end against the in-process simulator: every row becomes the
 * request it describes (input length checked against the tokens the simulator counted, output
 * length against the row), and request_count matches.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';

interface Measured {
  xRequestId: string;
  isl: number;
  osl: number;
  serverPromptTokens: number | undefined;
}

function config(dir: string, url: string, over: Partial<ProfileConfig>): ProfileConfig {
  return profileConfig({
    models: ['sim-model'],
    tokenizer: 'builtin',
    url,
    streaming: true,
    randomSeed: 5,
    requestTimeoutSeconds: 30,
    artifactDir: join(dir, 'run'),
    gracePeriodSeconds: 5,
    commandLine: 'test',
    // No client warm-up: half a second of CPU a run, against a simulator of its own; nothing here is timed.
    clientWarmupMs: 0,
    ...over,
  });
}

/** Writes `content` as the input file, runs it and returns each record's ISL/OSL with the server's count. */
async function replay(fileName: string, content: string, over: Partial<ProfileConfig>): Promise<Measured[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-datasets-'));
  const inputFile = join(dir, fileName);
  writeFileSync(inputFile, content);
  const truthPath = join(dir, 'truth.jsonl');
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 0.2, groundTruthLog: truthPath });
  try {
    const silent = { info: () => undefined, warn: () => undefined };
    const cfg = config(dir, sim.url, { inputFile, ...over });
    await runProfile(cfg, { log: silent, stopSignal: new AbortController().signal });
  } finally {
    await sim.close();
  }
  const truth = new Map<string, number>();
  for (const l of readFileSync(truthPath, 'utf8').trim().split('\n')) {
    const t = JSON.parse(l) as { x_request_id: string; prompt_tokens: number };
    truth.set(t.x_request_id, t.prompt_tokens);
  }
  const lines = readFileSync(join(dir, 'run', 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n');
  return lines.map((l) => {
    const rec = JSON.parse(l) as {
      metadata: { x_request_id: string };
      metrics: Record<string, { value: number }>;
      error: unknown;
    };
    assert.equal(rec.error, null);
    return {
      xRequestId: rec.metadata.x_request_id,
      isl: rec.metrics.input_sequence_length?.value ?? -1,
      osl: rec.metrics.output_sequence_length?.value ?? -1,
      serverPromptTokens: truth.get(rec.metadata.x_request_id),
    };
  });
}

const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

test('single_turn: one request per line, literal text, output_length honoured', async () => {
  const rows = [
    { text: 'alpha beta gamma', output_length: 2 },
    { text: 'delta', output_length: 3 },
  ];
  const got = await replay('single.jsonl', jsonl(rows), {
    customDatasetType: 'single_turn',
    conversationNum: rows.length,
    concurrency: 1,
  });
  assert.deepEqual(
    got.map((g) => g.osl),
    [2, 3],
  );
  for (const g of got) assert.equal(g.isl, g.serverPromptTokens);
});

test('multi_turn: every turn of every session is sent, ISL grows with the carried history', async () => {
  const rows = [
    {
      session_id: 'a',
      turns: [
        { text: 'one', output_length: 2 },
        { text: 'two', output_length: 2 },
      ],
    },
    { session_id: 'b', turns: [{ text: 'three', output_length: 1 }] },
  ];
  const got = await replay('multi.jsonl', jsonl(rows), {
    customDatasetType: 'multi_turn',
    conversationNum: rows.length,
    concurrency: 1,
  });
  assert.equal(got.length, 3);
  assert.deepEqual(sorted(got.map((g) => g.osl)), [1, 2, 2]);
  for (const g of got) assert.ok(g.serverPromptTokens !== undefined && g.serverPromptTokens >= g.isl);
});

test('random_pool: --request-count draws from the pool with replacement', async () => {
  const rows = [
    { text: 'red', output_length: 1 },
    { text: 'green', output_length: 1 },
  ];
  const got = await replay('pool.jsonl', jsonl(rows), {
    customDatasetType: 'random_pool',
    concurrency: 2,
    requestCount: 5,
  });
  assert.equal(got.length, 5);
  for (const g of got) assert.deepEqual([g.osl, g.isl], [1, g.serverPromptTokens]);
});

test('azure_trace: a few rows on a fixed schedule, ISL = ContextTokens, OSL = GeneratedTokens', async () => {
  const head = readFileSync('examples/traces/azure_llm_2023_code.csv', 'utf8').split('\n').slice(0, 4);
  const got = await replay('azure.csv', `${head.join('\n')}\n`, {
    customDatasetType: 'azure_trace',
    fixedSchedule: true,
    synthesisSpeedupRatio: 10,
  });
  const rows = head.slice(1).map((l) => l.split(',').map(Number));
  assert.deepEqual(sorted(got.map((g) => g.isl)), sorted(rows.map((r) => r[1] as number)));
  assert.deepEqual(sorted(got.map((g) => g.osl)), sorted(rows.map((r) => r[2] as number)));
  for (const g of got) assert.equal(g.isl, g.serverPromptTokens);
});

test('burst_gpt_trace: a hand-made CSV, zero-request rows skipped, lengths exact', async () => {
  const csv = [
    'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type',
    '5,ChatGPT,40,3,43,Conversation log',
    '5.02,GPT-4,0,0,0,Conversation log',
    '5.05,GPT-4,75,2,77,API log',
    '5.1,ChatGPT,12,4,16,API log',
  ].join('\n');
  const got = await replay('burst.csv', `${csv}\n`, {
    customDatasetType: 'burst_gpt_trace',
    fixedSchedule: true,
  });
  assert.deepEqual(sorted(got.map((g) => g.isl)), [12, 40, 75]);
  assert.deepEqual(sorted(got.map((g) => g.osl)), [2, 3, 4]);
  for (const g of got) assert.equal(g.isl, g.serverPromptTokens);
});
