/**
 * Conversation context modes on the wire: a 3-turn multi_turn session against the in-process
 * simulator, which keeps every request body it received; the third request's `messages` must be
 * exactly what each mode prescribes (AIPerf reference, "Conversation context modes").
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import type { ContextMode } from '../../src/dataset/types.js';
import { runProfile } from '../../src/run/profile.js';
import { outputText } from '../../src/simulator/responses.js';
import { startSimulator } from '../../src/simulator/server.js';

const SESSION = {
  session_id: 'talk',
  turns: [
    { text: 'first question', output_length: 2 },
    { text: 'second question', output_length: 4 },
    { text: 'third question', output_length: 1 },
  ],
};

function config(dir: string, url: string, inputFile: string, mode: ContextMode): ProfileConfig {
  return profileConfig({
    models: ['sim-model'],
    tokenizer: 'builtin',
    url,
    streaming: true,
    inputFile,
    customDatasetType: 'multi_turn',
    // The file's one session, once (AIPerf's default would cycle it to 10 requests).
    conversationNum: 1,
    contextModeOverride: mode,
    concurrency: 1,
    fixedScheduleAutoOffset: false,
    randomSeed: 1,
    requestTimeoutSeconds: 30,
    artifactDir: join(dir, mode),
    gracePeriodSeconds: 5,
    commandLine: 'test',
    // No client warm-up: half a second of CPU a run, against a simulator of its own; nothing here is timed.
    clientWarmupMs: 0,
  });
}

/** Runs the session in `mode` and returns the `messages` of each request the simulator received. */
async function sentMessages(mode: ContextMode): Promise<unknown[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-context-'));
  const file = join(dir, 'session.jsonl');
  writeFileSync(file, `${JSON.stringify(SESSION)}\n`);
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 }, { captureRequests: true });
  try {
    const silent = { info: () => undefined, warn: () => undefined };
    await runProfile(config(dir, sim.url, file, mode), {
      log: silent,
      stopSignal: new AbortController().signal,
    });
    return sim.capturedRequests().map((r) => {
      assert.equal(r.path, '/v1/chat/completions');
      return (JSON.parse(r.body) as { messages: unknown[] }).messages;
    });
  } finally {
    await sim.close();
  }
}

const user = (content: string) => ({ role: 'user', content });
// The simulator's live replies: output tokens 0..n-1 of its word list.
const reply = (tokens: number) => ({ role: 'assistant', content: outputText(0, tokens) });

test('deltas_without_responses: earlier user turns interleaved with the live replies, then turn 3', async () => {
  const sent = await sentMessages('deltas_without_responses');
  assert.equal(sent.length, 3);
  assert.deepEqual(sent[1], [user('first question'), reply(2), user('second question')]);
  assert.deepEqual(sent[2], [
    user('first question'),
    reply(2),
    user('second question'),
    reply(4),
    user('third question'),
  ]);
});

test('deltas_with_responses: earlier turns as stored (no recorded replies here), live replies dropped', async () => {
  const sent = await sentMessages('deltas_with_responses');
  assert.equal(sent.length, 3);
  assert.deepEqual(sent[2], [user('first question'), user('second question'), user('third question')]);
});

test('message_array_with_responses: turn 3 alone', async () => {
  const sent = await sentMessages('message_array_with_responses');
  assert.deepEqual(sent, [[user('first question')], [user('second question')], [user('third question')]]);
});
