/**
 * Issue 14 scope 7, through the product: every request of a hash-id trace carries the prompt tokens
 * an ideal prefix cache would hold (`ideal_cached_tokens`) beside the server's `usage_cached_tokens`;
 * the summary, the console and the report put both side by side; and a server whose cache is still
 * warm from an earlier run with the same `--random-seed` is called out. One simulator instance serves
 * every run here, as a real server left running between runs would.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { profileConfig } from '../../src/config/schema.js';
import type { CacheCheckSummary } from '../../src/metrics/cache-check.js';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { type ExportedRecord, readRunArtifacts } from '../helpers/run-artifacts.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
const SILENT = { info: () => undefined, warn: () => undefined };
const WARM = /left warm by an earlier run with the same --random-seed/;

type RecordLine = ExportedRecord;

interface Exported {
  records: RecordLine[];
  summary: { warnings: string[]; cache_check?: CacheCheckSummary };
  console: string;
  report: string;
}

let server: RunningSimulator;
before(async () => {
  server = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 });
});
after(async () => {
  await server.close();
});

async function replay(randomSeed: number): Promise<Exported> {
  return replayFile(server.url, TRACE, { randomSeed });
}

async function replayFile(
  url: string,
  inputFile: string,
  over: Partial<ProfileConfigInput>,
): Promise<Exported> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-cache-check-'));
  const config = profileConfig({
    models: ['Qwen/Qwen3-0.6B'],
    url,
    streaming: true,
    inputFile,
    customDatasetType: 'bailian_trace',
    fixedSchedule: true,
    synthesisSpeedupRatio: 100,
    artifactDir: dir,
    ui: 'none',
    clientWarmupMs: 0,
    commandLine: 'cache check test',
    ...over,
  });
  const outcome = await runProfile(config, { log: SILENT, stopSignal: new AbortController().signal });
  return {
    ...readRunArtifacts<Exported['summary']>(dir),
    console: outcome.consoleText,
    report: readFileSync(join(dir, 'report.html'), 'utf8'),
  };
}

test('the same trace twice against one server: ideal and reported agree on a cold cache, the warm one is called out', async () => {
  const cold = await replay(7);
  assert.equal(cold.records.length, 40);
  for (const r of cold.records) {
    assert.equal(typeof r.metrics.ideal_cached_tokens?.value, 'number');
    assert.equal(typeof r.metrics.usage_cached_tokens?.value, 'number');
  }
  const c1 = cold.summary.cache_check;
  assert.ok(c1 !== undefined && c1.ideal_hit_ratio !== null && c1.reported_hit_ratio !== null);
  assert.equal(c1.requests_with_ideal, 40);
  assert.equal(c1.requests_reported, 40);
  assert.ok(c1.ideal_hit_ratio > 0, 'the trace shares prefixes');
  assert.equal(c1.over_reported, 0);
  assert.ok(Math.abs(c1.ideal_hit_ratio - c1.reported_hit_ratio) < 0.05, JSON.stringify(c1));
  assert.ok(!cold.summary.warnings.some((w) => WARM.test(w)), cold.summary.warnings.join('\n'));
  assert.match(
    cold.console,
    /Prefix cache: ideal [\d.]+ % of prompt tokens .*server reported [\d.]+ % \(40 of 40 requests reported cached tokens\); 0 over the ideal/,
  );
  assert.match(cold.report, /<section id="prefix-cache">/);
  assert.match(cold.report, /Cached prompt tokens: reported vs ideal/);

  // Same seed: the same hash ids give the same prompt text, which the server still holds.
  const warm = await replay(7);
  const c2 = warm.summary.cache_check;
  assert.ok(c2 !== undefined && c2.reported_hit_ratio !== null && c2.over_reported !== null);
  assert.ok(c2.reported_cached_tokens > c2.ideal_cached_tokens_of_reported, JSON.stringify(c2));
  assert.ok(c2.over_reported >= 2, JSON.stringify(c2));
  assert.ok(c2.reported_hit_ratio > c1.reported_hit_ratio);
  const warning = warm.summary.warnings.find((w) => WARM.test(w));
  assert.ok(warning?.startsWith(`${c2.over_reported} of 40 requests`), warm.summary.warnings.join('\n'));
  assert.match(warm.report, /left warm by an earlier run/);

  // Another seed gives other block texts: cold again for this server, no warning.
  const reseeded = await replay(8);
  assert.equal(reseeded.summary.cache_check?.over_reported, 0);
  assert.ok(!reseeded.summary.warnings.some((w) => WARM.test(w)));
});

test('a block first sent partial: the ideal holds only its tokens, and the block-size warning counts ids once', async () => {
  // Chat 3 sends id 6 as a partial last block (40 tokens = 16 + 16 + 8); chat 5 sends it whole.
  const rows = [
    [1, 0.0, 48, [100, 1, 2]],
    [2, 0.5, 48, [200, 1, 2]],
    [3, 1.0, 40, [300, 5, 6]],
    [4, 1.5, 64, [100, 1, 2, 7]],
    [5, 2.0, 48, [300, 5, 6]],
  ].map(([id, ts, len, ids]) =>
    JSON.stringify({
      chat_id: id,
      parent_chat_id: -1,
      timestamp: ts,
      input_length: len,
      output_length: 4,
      type: 'text',
      turn: 1,
      hash_ids: ids,
    }),
  );
  const trace = join(mkdtempSync(join(tmpdir(), 'tokenload-partial-')), 'partial.jsonl');
  writeFileSync(trace, `${rows.join('\n')}\n`);
  const fresh = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 });
  try {
    // Loaded whole, with the client warm-up (which synthesizes the same prompts again and again).
    for (const traceStreaming of [false, true]) {
      const run = await replayFile(fresh.url, trace, { traceStreaming, clientWarmupMs: 300 });
      const sizeWarnings = run.summary.warnings.filter((w) => /two different block sizes/.test(w));
      assert.deepEqual(sizeWarnings, [
        '1 hash_id appeared with two different block sizes; check --isl-block-size',
      ]);
      const byChat = new Map(run.records.map((r) => [r.metadata.conversation_id, r]));
      const partialFirst = byChat.get('3');
      const wholeLater = byChat.get('5');
      assert.ok(partialFirst !== undefined && wholeLater !== undefined);
      // Chat 5's prefix is chat 3's whole prompt, no more: the 8 tokens of id 6 it never sent are not held.
      const ideal = wholeLater.metrics.ideal_cached_tokens?.value;
      assert.equal(ideal, partialFirst.metrics.input_sequence_length?.value);
      assert.ok((wholeLater.metrics.usage_cached_tokens?.value ?? 0) <= (ideal ?? 0));
      assert.equal(run.summary.cache_check?.over_reported, 0);
    }
  } finally {
    await fresh.close();
  }
});
