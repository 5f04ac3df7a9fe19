/**
 * Stream integrity beyond one fixture request (the fixtures themselves run in fixtures.test.ts): an
 * event far beyond any line buffer is parsed up to the client's cap and fails as the client's limit
 * past it, a cumulative stream's text goes into the multi-turn history as the text the server
 * meant, once, and `--use-server-token-count` does not take a prompt count that contradicts the
 * prompt sent. Driven through `runProfile` against the fixture player; what is asserted is what the
 * run exported.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MAX_EVENT_BYTES } from '../../src/client/sse-decoder.js';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import {
  chatChunk,
  type Fixture,
  type FixturePlayer,
  inlineFixture,
  loadFixtures,
  OWN_FIXTURE_DIR,
  startFixturePlayer,
} from '../helpers/fixture-player.js';
import { metric, type ProfiledFixture, profileFixture } from '../helpers/fixture-profile.js';

/** `data: …\n\n` of a chat chunk carrying reasoning words, `bytes` bytes (ASCII) in all. */
function reasoningEvent(bytes: number): string {
  const head = 'data: {"choices":[{"index":0,"delta":{"reasoning_content":"';
  const tail = '"},"finish_reason":null}]}\n\n';
  const words = 'plan the week '.repeat(Math.ceil(bytes / 14)).slice(0, bytes - head.length - tail.length);
  return `${head}${words}${tail}`;
}

const finish = `${chatChunk('Done.')}${chatChunk(null, 'stop')}data: [DONE]\n\n`;
const sse = { 'content-type': 'text/event-stream' };
const underCap = inlineFixture('under-cap-event', {
  status: 200,
  headers: sse,
  writes: [
    { atMs: 0, data: reasoningEvent(MAX_EVENT_BYTES - 1024) },
    { atMs: 20, data: finish },
  ],
  end: 'close',
});
const overCap = inlineFixture('over-cap-event', {
  status: 200,
  headers: sse,
  writes: [
    { atMs: 0, data: chatChunk('Hi') },
    { atMs: 20, data: reasoningEvent(MAX_EVENT_BYTES + 64 * 1024) },
    { atMs: 40, data: finish },
  ],
  end: 'close',
});
const words = ['The', ' sky', ' over', ' the', ' hills', ' turned', ' gold', '.'];
const cumulative = inlineFixture('cumulative-turns', {
  status: 200,
  headers: sse,
  writes: [
    ...words.map((_, i) => ({ atMs: 20 * i, data: chatChunk(words.slice(0, i + 1).join('')) })),
    { atMs: 20 * words.length, data: `${chatChunk(null, 'stop')}data: [DONE]\n\n` },
  ],
  end: 'close',
});

const promptShort = loadFixtures(OWN_FIXTURE_DIR).find(
  (f) => f.name === 't26-usage-prompt-tokens-below-prompt-sent',
) as Fixture;

let player: FixturePlayer;
before(async () => {
  player = await startFixturePlayer([underCap, overCap, cumulative, promptShort]);
});
after(async () => {
  await player.close();
});

test(`an event just under the ${MAX_EVENT_BYTES / 1024 / 1024} MiB cap is parsed like any other`, async () => {
  const run: ProfiledFixture = await profileFixture(player, underCap);
  assert.equal(run.line.error, null, JSON.stringify(run.line.error));
  const ttft = run.line.metrics.time_to_first_token?.value;
  assert.ok(typeof ttft === 'number' && ttft > 0);
  const gaps = run.line.metrics.inter_chunk_latency?.value;
  assert.ok(
    Array.isArray(gaps) && gaps.length === 1,
    'two content chunks: the big reasoning one and the answer',
  );
  assert.equal(run.line.stream_integrity, undefined);
});

test('an event over the cap fails as the client’s limit, named, and the run warns once', async () => {
  const run = await profileFixture(player, overCap);
  const error = run.line.error;
  assert.equal(error?.kind, 'event_too_large');
  assert.equal(error?.type, 'EventTooLarge');
  assert.equal(error?.code, 0, 'no server status: the limit is the client’s');
  assert.match(
    error?.message ?? '',
    /client's limit of 16 MiB per event \(tokenload's cap, not a server error\): \d+ bytes/,
  );
  const bytes = Number(/: (\d+) bytes/.exec(error?.message ?? '')?.[1]);
  assert.ok(bytes > MAX_EVENT_BYTES, `${bytes} bytes reported`);
  const warned = run.summary.warnings.filter((w) => w.includes('event_too_large'));
  assert.equal(warned.length, 1, JSON.stringify(run.summary.warnings));
  assert.equal((run.summary.stream_integrity as { event_too_large: number }).event_too_large, 1);
});

test('a cumulative stream: its text enters the next turn’s history once, as the server meant it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-cumulative-'));
  try {
    await runProfile(
      profileConfig({
        models: ['test-model'],
        tokenizer: 'builtin',
        url: player.origin,
        endpointType: 'chat',
        streaming: true,
        headers: { 'x-fixture': cumulative.name },
        synthetic: { isl: 8, osl: 16, numDatasetEntries: 1, sessionTurnsMean: 2 },
        contextModeOverride: 'deltas_without_responses',
        requestCount: 2,
        concurrency: 1,
        exportLevel: 'raw',
        clientWarmupMs: 0,
        serverMetrics: false,
        ui: 'none',
        artifactDir: dir,
        commandLine: 'cumulative turns',
      }),
      { log: { info: () => undefined, warn: () => undefined }, stopSignal: new AbortController().signal },
    );
    const raw = readFileSync(join(dir, 'profile_export_raw.jsonl'), 'utf8').trim().split('\n');
    const lines = raw
      .map((l) => JSON.parse(l) as RawLine)
      .sort((a, b) => a.metadata.turn_index - b.metadata.turn_index);
    assert.equal(lines.length, 2);
    const first = lines[0] as RawLine;
    assert.equal(first.responses.map((r) => r.text).join(''), words.join(''), 'chunks hold what each added');
    const history = (lines[1] as RawLine).payload.messages.filter((m) => m.role === 'assistant');
    assert.deepEqual(
      history.map((m) => m.content),
      [words.join('')],
    );
    const records = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n');
    for (const line of records) assert.deepEqual(JSON.parse(line).stream_integrity, { cumulative: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--use-server-token-count does not take a usage.prompt_tokens that contradicts the prompt sent', async () => {
  const run = await profileFixture(player, promptShort, { useServerTokenCount: true });
  assert.equal(run.line.error, null);
  assert.equal(metric(run.line, 'input_sequence_length'), 200, 'the client count of the prompt sent');
  assert.equal(run.line.metadata.isl_source, 'client_prompt');
  assert.equal(metric(run.line, 'usage_prompt_tokens'), undefined);
  assert.equal(run.line.metadata.usage !== null, true, 'the line keeps the usage the server sent');
  assert.deepEqual(run.line.stream_integrity, { usage_untrusted: ['prompt_tokens'] });
  const warned = run.summary.warnings.filter((w) => w.includes('usage.prompt_tokens below the client count'));
  assert.equal(warned.length, 1, JSON.stringify(run.summary.warnings));
  // The only usage was set aside: the usage check still has its line, saying so.
  assert.match(
    run.console,
    /Usage check: nothing compared; 1 request's usage not used \(it contradicted the stream\)/,
  );
});

/** What the test reads of a `profile_export_raw.jsonl` line. */
interface RawLine {
  metadata: { turn_index: number };
  payload: { messages: { role: string; content: string }[] };
  responses: { text: string }[];
}
