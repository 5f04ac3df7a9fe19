/** Successful exchanges beyond the fixture set: CRLF, split bytes, completions, whole bodies, reasoning. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { packageVersion } from '../../src/util/package-root.js';
import { chatChunk, inlineFixture, playFixturesInTests } from '../helpers/fixture-player.js';

const SSE = { 'content-type': 'text/event-stream' };
const crlf = (text: string) => text.replaceAll('\n', '\r\n');
/** One chat event with choices 1 and 2 (index 1 and 0, in that order): [content, finish_reason] each. */
const twoChoices = (choices: [string | null, string | null][]): string =>
  `data: ${JSON.stringify({
    object: 'chat.completion.chunk',
    choices: choices
      .map(([content, finish], index) => ({
        index,
        delta: content === null ? {} : { content },
        finish_reason: finish,
      }))
      .reverse(),
  })}\n\n`;
const fixtures = [
  inlineFixture('crlf-split', {
    status: 200,
    headers: SSE,
    writes: [
      { atMs: 0, data: crlf(chatChunk('caf')).slice(0, -1) },
      { atMs: 20, hex: '0a' },
      { atMs: 40, data: crlf(chatChunk('é ')).slice(0, 40) },
      { atMs: 60, data: crlf(chatChunk('é ')).slice(40) },
      {
        atMs: 80,
        hex: Buffer.from(crlf(chatChunk('🙂')))
          .subarray(0, 45)
          .toString('hex'),
      },
      {
        atMs: 100,
        hex: Buffer.from(crlf(chatChunk('🙂')))
          .subarray(45)
          .toString('hex'),
      },
      { atMs: 120, data: crlf(chatChunk(null, 'stop')) + 'data: [DONE]\r\n\r\n' },
    ],
    end: 'close',
  }),
  inlineFixture(
    'completions-finish-no-done',
    {
      status: 200,
      headers: SSE,
      writes: [
        { atMs: 0, data: 'data: {"object":"text_completion","choices":[{"index":0,"text":"A"}]}\n\n' },
        {
          atMs: 20,
          data: 'data: {"object":"text_completion","choices":[{"index":0,"text":"B","finish_reason":"stop"}]}\n\n',
        },
      ],
      end: 'close',
    },
    { endpoint: 'completions' },
  ),
  inlineFixture('two-choices-one-unfinished', {
    status: 200,
    headers: SSE,
    writes: [
      {
        atMs: 0,
        data: twoChoices([
          ['A', null],
          ['a', null],
        ]),
      },
      {
        atMs: 20,
        data: twoChoices([
          ['B', 'stop'],
          ['b', null],
        ]),
      },
    ],
    end: 'close',
  }),
  inlineFixture('two-choices-finished-apart', {
    status: 200,
    headers: SSE,
    writes: [
      {
        atMs: 0,
        data: twoChoices([
          ['A', null],
          ['a', null],
        ]),
      },
      {
        atMs: 20,
        data: twoChoices([
          ['B', 'stop'],
          ['b', null],
        ]),
      },
      {
        atMs: 40,
        data: twoChoices([
          [null, null],
          ['c', 'length'],
        ]),
      },
    ],
    end: 'close',
  }),
  inlineFixture(
    'whole-chat-body',
    {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: {
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 2 },
      },
      delayMs: 30,
    },
    { stream: false },
  ),
  inlineFixture('reasoning-then-text', {
    status: 200,
    headers: SSE,
    writes: [
      {
        atMs: 0,
        data: 'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}\n\n',
      },
      { atMs: 30, data: chatChunk('ok') },
      { atMs: 31, data: 'data: not json\n\n' },
      { atMs: 32, data: `${chatChunk(null, 'stop')}data: [DONE]\n\n` },
    ],
    end: 'close',
  }),
];

const { send, player: current } = playFixturesInTests(fixtures);

test('CRLF stream with \\r\\n and UTF-8 characters split across writes', async () => {
  const raw = await send('crlf-split');
  assert.equal(raw.error, null);
  assert.deepEqual(
    raw.chunks.map((c) => c.text),
    ['caf', 'é ', '🙂'],
  );
  assert.equal(raw.parseErrors, 0);
  assert.equal(raw.finishReason, 'stop');
  // Each event is stamped by the read that completed it, which the player never sends early. The
  // first event already ends at the lone \r of the 0 ms write (a CR is a line end on its own).
  const arrivalsMs = raw.chunks.map((chunk) => (chunk.atNs - raw.startNs) / 1e6);
  for (const [i, scriptedMs] of [0, 60, 100].entries())
    assert.ok((arrivalsMs[i] ?? 0) >= scriptedMs, `chunk ${i}`);
});

test('completions stream: finish_reason on every choice and a clean end is complete without [DONE]', async () => {
  const raw = await send('completions-finish-no-done', { endpoint: 'completions', maxTokens: 2 });
  assert.equal(raw.error, null);
  assert.equal(raw.chunks.map((c) => c.text).join(''), 'AB');
  assert.notEqual(raw.streamEndNs, null);
  const sent = current().log.find((entry) => entry.fixture === 'completions-finish-no-done');
  assert.equal(sent?.path, '/v1/completions');
  assert.equal(sent?.body.max_tokens, 2);
});

test('two choices, a clean end without [DONE]: incomplete while one choice has no finish_reason', async () => {
  const raw = await send('two-choices-one-unfinished');
  assert.equal(raw.error?.kind, 'stream_incomplete');
  assert.equal(raw.chunks.map((c) => c.text).join(''), 'aAbB');
});

test('two choices, a clean end without [DONE]: complete once each choice finished, in any event', async () => {
  const raw = await send('two-choices-finished-apart');
  assert.equal(raw.error, null);
  assert.equal(raw.finishReason, 'length');
  assert.equal(raw.chunks.map((c) => c.text).join(''), 'aAbBc');
});

test('non-streamed chat body: one chunk stamped when the body has been read', async () => {
  const raw = await send('whole-chat-body', { stream: false });
  assert.equal(raw.error, null);
  assert.equal(raw.chunks.length, 1);
  assert.equal(raw.chunks[0]?.text, 'Hi!');
  assert.equal(raw.usage?.completion_tokens, 2);
  assert.ok((raw.chunks[0]?.atNs ?? 0) - raw.startNs >= 30e6);
  const sent = current().log.find((entry) => entry.fixture === 'whole-chat-body');
  assert.equal(sent?.headers.accept, 'application/json');
  assert.equal(sent?.body.stream_options, undefined);
});

test('reasoning chunk counts for TTFT; a bad JSON event fails the request there (FORMAT.md 1.2 malformed_event)', async () => {
  const raw = await send('reasoning-then-text');
  assert.equal(raw.error?.kind, 'malformed_event');
  assert.match(
    raw.error?.message ?? '',
    /an SSE data event is not JSON \(8 characters\); it starts "not json"/,
  );
  // The record ends at that event: the finish and [DONE] after it do not count.
  assert.equal(raw.endNs, raw.error?.failedAtNs);
  assert.equal(raw.finishReason, null, 'the finish after the bad event was not read');
  assert.deepEqual(
    raw.chunks.map((c) => [c.reasoning, c.text]),
    [
      ['hmm', ''],
      ['', 'ok'],
    ],
  );
  assert.equal(raw.parseErrors, 1);
});

test('request headers: content type, accept, user agent, caller headers', async () => {
  await send('crlf-split', {
    headers: { 'x-fixture': 'crlf-split', 'X-Request-ID': 'abc', 'Content-Type': 'text/plain' },
  });
  const sent = current()
    .log.filter((entry) => entry.fixture === 'crlf-split')
    .at(-1);
  assert.equal(sent?.headers['content-type'], 'application/json');
  assert.equal(sent?.headers.accept, 'text/event-stream');
  assert.equal(sent?.headers['user-agent'], `tokenload/${packageVersion()}`);
  assert.equal(sent?.headers['x-request-id'], 'abc');
});
