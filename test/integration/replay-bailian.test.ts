/**
 * Issue "Bailian trace replay, end to end": the multi-turn Bailian sample replayed at 20× against
 * the built-in simulator (a real child process on loopback), checked from the artifacts a user
 * would open.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { runProfile } from '../../src/run/profile.js';
import { simulatorReplayConfig } from '../helpers/replay-config.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';

interface TraceRow {
  chat_id: number;
  parent_chat_id: number;
  input_length: number;
  hash_ids: number[];
}

interface RecordLine {
  metadata: {
    conversation_id: string;
    turn_index: number;
    x_request_id: string;
    request_scheduled_ns: number;
    request_start_ns: number;
    request_end_ns: number;
  };
  metrics: Record<string, { value: number | number[]; unit: string }>;
  error: unknown;
}

function config(artifactDir: string): ProfileConfig {
  return simulatorReplayConfig(artifactDir, TRACE, 20, { commandLine: 'test' });
}

/** Parses JSONL keeping epoch-ns integers exact (they exceed 2^53): read them as BigInt via regex. */
function epochNs(line: string, field: string): bigint {
  const m = new RegExp(`"${field}":(\\d+)`).exec(line);
  assert.ok(m, `${field} present`);
  return BigInt(m[1] as string);
}

test('multi-turn Bailian replay at 20x: 40 requests, exact ISL, turns after parents, shared prefixes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-replay-'));
  const silent = { info: () => undefined, warn: () => undefined };
  const outcome = await runProfile(config(dir), { log: silent, stopSignal: new AbortController().signal });
  assert.equal(outcome.wasCancelled, false);

  const rows = readFileSync(TRACE, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TraceRow);
  const byChat = new Map(rows.map((r) => [r.chat_id, r]));
  const lines = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 40);
  const records = lines.map((l) => ({ text: l, rec: JSON.parse(l) as RecordLine }));
  for (const { rec } of records) assert.equal(rec.error, null, JSON.stringify(rec.error));

  // Bailian session ids are root chat ids; turn k of a session is the k-th row of its chain.
  const chains = new Map<string, TraceRow[]>();
  for (const r of rows) {
    let root = r;
    while (root.parent_chat_id !== -1 && byChat.has(root.parent_chat_id))
      root = byChat.get(root.parent_chat_id) as TraceRow;
    const list = chains.get(String(root.chat_id)) ?? [];
    list.push(r);
    chains.set(String(root.chat_id), list);
  }
  for (const { rec } of records) {
    const row = chains.get(rec.metadata.conversation_id)?.[rec.metadata.turn_index];
    assert.ok(row, `row for ${rec.metadata.conversation_id}/${rec.metadata.turn_index}`);
    assert.equal(rec.metrics.input_sequence_length?.value, row.input_length);
  }

  // Each later turn starts after its parent turn ended.
  const byTurn = new Map(
    records.map((r) => [`${r.rec.metadata.conversation_id}/${r.rec.metadata.turn_index}`, r.text]),
  );
  let laterTurns = 0;
  for (const { rec, text } of records) {
    if (rec.metadata.turn_index === 0) continue;
    laterTurns++;
    const parent = byTurn.get(`${rec.metadata.conversation_id}/${rec.metadata.turn_index - 1}`);
    assert.ok(parent);
    assert.ok(epochNs(text, 'request_start_ns') >= epochNs(parent, 'request_end_ns'));
    assert.ok(epochNs(text, 'request_start_ns') >= epochNs(text, 'request_scheduled_ns'));
  }
  assert.equal(laterTurns, 14);

  // Turns sharing leading hash_ids share their prompt prefix byte for byte (inputs.json).
  const inputs = JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8')) as {
    data: Array<{ session_id: string; payloads: Array<{ messages: Array<{ content: string }> }> }>;
  };
  const prompts = new Map<string, string>();
  for (const entry of inputs.data) {
    const chain = chains.get(entry.session_id) ?? [];
    const seen = [...prompts.keys()].filter((k) => k.startsWith(`${entry.session_id}/`)).length;
    entry.payloads.forEach((p, i) => {
      prompts.set(`${entry.session_id}/${seen + i}`, p.messages[0]?.content ?? '');
    });
    assert.ok(chain.length > 0);
  }
  let checkedPairs = 0;
  for (const [sid, chain] of chains) {
    for (let k = 1; k < chain.length; k++) {
      const a = chain[k - 1] as TraceRow;
      const b = chain[k] as TraceRow;
      let shared = 0;
      while (shared < a.hash_ids.length - 1 && a.hash_ids[shared] === b.hash_ids[shared]) shared++;
      if (shared === 0) continue;
      const pa = prompts.get(`${sid}/${k - 1}`) ?? '';
      const pb = prompts.get(`${sid}/${k}`) ?? '';
      // shared full blocks of 16 one-token words: the texts agree up to that point
      const cut = nthSpace(pa, shared * 16);
      assert.ok(cut > 0);
      assert.equal(pb.slice(0, cut), pa.slice(0, cut), `${sid} turn ${k}`);
      checkedPairs++;
    }
  }
  assert.ok(checkedPairs >= 10, `checked ${checkedPairs} parent/child pairs`);

  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Record<
    string,
    { avg: number }
  >;
  assert.equal(summary.request_count?.avg, 40);
  assert.ok(summary.schedule_lag !== undefined);
});

/** Index of the n-th word boundary (words start with a space); n words = text before it. */
function nthSpace(text: string, n: number): number {
  let seen = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) === 32) {
      if (seen === n) return i;
      seen++;
    }
  }
  return text.length;
}
