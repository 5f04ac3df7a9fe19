/**
 * Plays every SSE fixture (test/fixtures/sse) against the real client and checks the RawRecord
 * against the fixture's `expect` block with the comparison rules of FORMAT.md §5.1.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createHttpClient } from '../../src/client/undici-client.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import type { RawRecord } from '../../src/record/types.js';
import {
  type Fixture,
  type FixturePlayer,
  inlineFixture,
  loadFixtures,
  startFixturePlayer,
} from '../helpers/fixture-player.js';
import { sendOnce } from '../helpers/send-once.js';
import { oslFromRecord } from '../helpers/token-source.js';

type Range = [number, number];
const fixtures = loadFixtures();
let player: FixturePlayer;

const warmup = inlineFixture(
  'warmup',
  { status: 200, headers: {}, body: '{"choices":[]}' },
  { stream: false },
);

before(async () => {
  player = await startFixturePlayer([...fixtures, warmup]);
  // The first request of a process pays one-off costs (undici's llhttp WASM compile, lazy module
  // code) inside its own measured time; warm them up so fixture ranges measure steady-state work.
  await sendOnce({
    url: player.origin,
    endpoint: 'chat',
    model: 'm',
    messages: [],
    stream: false,
    headers: { 'x-fixture': 'warmup' },
  });
});
after(async () => {
  await player.close();
});

const msSince = (raw: RawRecord, atNs: number) => (atNs - raw.startNs) / 1e6;

function inRange(label: string, value: number | undefined, range: Range): void {
  assert.ok(value !== undefined, `${label}: no value, expected ${range[0]}–${range[1]}`);
  const late = player.log[player.log.length - 1]?.lateByMs ?? [];
  const worst = late.length === 0 ? 0 : Math.max(...late);
  const detail = `${label}: ${value.toFixed(3)} outside [${range[0]}, ${range[1]}] (server's worst write lateness ${worst.toFixed(1)} ms)`;
  assert.ok(value >= range[0] && value <= range[1], detail);
}

/** Per-record measurements named like the fixture `expect` fields. */
function measure(raw: RawRecord, fixture: Fixture) {
  const chunks = raw.chunks;
  const first = chunks[0];
  const last = chunks[chunks.length - 1];
  const firstOutput = chunks.find((chunk) => chunk.text !== '');
  const gaps = chunks.slice(1).map((chunk, i) => (chunk.atNs - (chunks[i]?.atNs ?? 0)) / 1e6);
  const { osl, reasoningTokens, source } = oslFromRecord(raw);
  const ttftMs = first === undefined ? undefined : msSince(raw, first.atNs);
  const latencyMs = last === undefined ? undefined : msSince(raw, last.atNs);
  const decodeMs = ttftMs === undefined || latencyMs === undefined ? undefined : latencyMs - ttftMs;
  const k = first?.usageCompletionTokens;
  const everyChunkHasUsage = chunks.every((chunk) => chunk.usageCompletionTokens !== undefined);
  void fixture;
  return {
    ttftMs,
    ttfoMs: firstOutput === undefined ? undefined : msSince(raw, firstOutput.atNs),
    requestLatencyMs: latencyMs,
    streamEndMs: raw.streamEndNs === null ? undefined : msSince(raw, raw.streamEndNs),
    failedAtMs: raw.error === null ? undefined : msSince(raw, raw.error.failedAtNs),
    contentChunks: chunks.length,
    reasoningChunks: chunks.filter((chunk) => chunk.reasoning !== '').length,
    outputText: chunks.map((chunk) => chunk.text).join(''),
    reasoningText: chunks.map((chunk) => chunk.reasoning).join(''),
    gaps,
    osl,
    reasoningTokens,
    source,
    itlMs: decodeMs === undefined || osl < 2 ? undefined : decodeMs / (osl - 1),
    itlPerChunkUsageMs:
      decodeMs === undefined || k === undefined || !everyChunkHasUsage || osl - k < 1
        ? undefined
        : decodeMs / (osl - k),
  };
}

function checkTransport(raw: RawRecord, transport: unknown): void {
  if (transport === undefined) return;
  if (transport === 'reset') assert.equal(raw.error?.kind, 'connection_reset');
  if (transport === 'clean_eof') assert.notEqual(raw.streamEndNs, null, 'clean end must be recorded');
  if (transport === 'truncated') assert.equal(raw.streamEndNs, null, 'a truncated body is no clean end');
}

function checkPartial(m: ReturnType<typeof measure>, partial: Record<string, unknown> | undefined): void {
  if (partial === undefined) return;
  if (partial.contentChunks !== undefined)
    assert.equal(m.contentChunks, partial.contentChunks, 'partial.contentChunks');
  if (partial.outputText !== undefined) assert.equal(m.outputText, partial.outputText, 'partial.outputText');
  if (partial.osl !== undefined) assert.equal(m.osl, partial.osl, 'partial.osl');
}

function checkGaps(gaps: number[], expected: { count: number; mean: Range; max: Range } | undefined): void {
  if (expected === undefined) return;
  assert.equal(gaps.length, expected.count, 'interChunkLatencyMs.count');
  inRange('interChunkLatencyMs.mean', gaps.reduce((a, b) => a + b, 0) / gaps.length, expected.mean);
  inRange('interChunkLatencyMs.max', Math.max(...gaps), expected.max);
}

function checkArrivals(raw: RawRecord, arrivals: { text: string; atMs: Range }[] | undefined): void {
  if (arrivals === undefined) return;
  assert.equal(raw.chunks.length, arrivals.length, 'chunkArrivals length');
  arrivals.forEach((arrival, i) => {
    const chunk = raw.chunks[i];
    assert.equal((chunk?.reasoning ?? '') + (chunk?.text ?? ''), arrival.text, `chunkArrivals[${i}].text`);
    inRange(
      `chunkArrivals[${i}].atMs`,
      chunk === undefined ? undefined : msSince(raw, chunk.atNs),
      arrival.atMs,
    );
  });
}

function checkExpect(raw: RawRecord, fixture: Fixture): void {
  const e = fixture.expect as Record<string, never>;
  const m = measure(raw, fixture);
  const ranges = [
    'ttftMs',
    'ttfoMs',
    'requestLatencyMs',
    'streamEndMs',
    'failedAtMs',
    'itlMs',
    'itlPerChunkUsageMs',
  ] as const;
  const exact = [
    'contentChunks',
    'reasoningChunks',
    'outputText',
    'reasoningText',
    'osl',
    'reasoningTokens',
  ] as const;
  if (e.ok !== undefined) assert.equal(raw.error === null, e.ok, `ok (error: ${JSON.stringify(raw.error)})`);
  if (e.error === null) assert.equal(raw.error, null);
  if (e.errorKind !== undefined)
    assert.equal(raw.error?.kind, e.errorKind, `errorKind (${raw.error?.message})`);
  if (e.httpStatus !== undefined) assert.equal(raw.httpStatus, e.httpStatus);
  if (e.errorMessageIncludes !== undefined) assert.ok(raw.error?.message.includes(e.errorMessageIncludes));
  if (e.tokenCountSource !== undefined && e.tokenCountSource === 'usage') assert.equal(m.source, 'usage');
  if (e.parseErrors !== undefined) assert.equal(raw.parseErrors, e.parseErrors, 'parseErrors');
  if (e.attempts !== undefined) assert.equal(player.attempts(fixture.name), e.attempts, 'attempts');
  for (const key of ranges) if (e[key] !== undefined) inRange(key, m[key], e[key]);
  for (const key of exact) if (e[key] !== undefined) assert.equal(m[key], e[key], key);
  checkTransport(raw, e.transport);
  checkGaps(m.gaps, e.interChunkLatencyMs);
  checkArrivals(raw, e.chunkArrivals);
  checkPartial(m, e.partial);
}

function checkRequestSent(fixture: Fixture): void {
  const sent = player.log.find((entry) => entry.fixture === fixture.name);
  assert.ok(sent !== undefined, 'the player saw the request');
  assert.equal(sent.body.model, fixture.model);
  assert.equal(sent.body.stream, fixture.request.stream);
  if (fixture.request.streamOptions !== undefined)
    assert.deepEqual(sent.body.stream_options, fixture.request.streamOptions);
  if (fixture.request.maxTokens !== undefined) {
    const key = fixture.request.endpoint === 'chat' ? 'max_completion_tokens' : 'max_tokens';
    assert.equal(sent.body[key], fixture.request.maxTokens);
  }
}

/** Waits (bounded) until the socket that carried the fixture's request has closed. */
async function requestSocketClosed(name: string): Promise<boolean> {
  const entry = player.log.find((logged) => logged.fixture === name);
  const deadline = performance.now() + 2000;
  while (entry !== undefined && !entry.socketClosed && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return entry?.socketClosed === true;
}

async function playOne(fixture: Fixture): Promise<void> {
  const adapter = ENDPOINTS[fixture.request.endpoint];
  const perChunkUsage = fixture.request.streamOptions?.continuous_usage_stats === true;
  const body = adapter.buildBody({
    model: fixture.model,
    messages: [{ role: 'user', content: `fixture ${fixture.name}` }],
    stream: fixture.request.stream,
    ...(fixture.request.maxTokens === undefined ? {} : { maxTokens: fixture.request.maxTokens }),
    useLegacyMaxTokens: false,
    perChunkUsage,
    extraInputs: {},
  });
  const client = createHttpClient({ url: player.origin, connections: 1 });
  try {
    const raw = await client.send({
      identity: {
        conversationId: fixture.name,
        turnIndex: 0,
        sessionNum: 0,
        xRequestId: fixture.name,
        xCorrelationId: fixture.name,
        model: fixture.model,
        scheduledNs: null,
        inputTokens: null,
        requestedOutputTokens: fixture.request.maxTokens ?? null,
      },
      path: adapter.defaultPath,
      headers: { 'x-fixture': fixture.name },
      body: JSON.stringify(body),
      stream: fixture.request.stream,
      adapter,
      timeoutMs: fixture.clientTimeoutMs ?? 10_000,
    });
    checkRequestSent(fixture);
    checkExpect(raw, fixture);
    if (fixture.clientTimeoutMs !== undefined || fixture.response.end === 'hang') {
      assert.ok(await requestSocketClosed(fixture.name), 'the timed-out socket was closed by the client');
    }
  } finally {
    await client.close();
  }
}

for (const fixture of fixtures) {
  test(`fixture ${fixture.name} (${fixture.case})`, async () => {
    await playOne(fixture);
  });
}
