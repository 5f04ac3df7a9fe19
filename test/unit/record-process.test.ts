import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TextTokenizer } from '../../src/prompt/tokenizer.js';
import { processRecord } from '../../src/record/process.js';
import { countTokens } from '../../src/record/tokens.js';
import type { ContentChunk, RawRecord } from '../../src/record/types.js';

const MS = 1e6;

/** Test tokenizer: one token per whitespace-separated word. */
const words: TextTokenizer = {
  name: 'words',
  engine: 'library',
  encode: (t) =>
    t
      .split(/\s+/)
      .filter((w) => w !== '')
      .map((_, i) => i),
  count: (t) => t.split(/\s+/).filter((w) => w !== '').length,
  decode: () => '',
  vocab: () => new Map(),
  bosToken: null,
  eosToken: null,
};

function chunk(atMs: number, text: string, reasoning = ''): ContentChunk {
  return { atNs: atMs * MS, text, reasoning };
}

function raw(over: Partial<RawRecord>): RawRecord {
  return {
    conversationId: 'c0',
    turnIndex: 0,
    sessionNum: 0,
    xRequestId: 'req-1',
    xCorrelationId: 'corr-1',
    model: 'm',
    scheduledNs: null,
    startNs: 1000 * MS,
    sentNs: null,
    connectionReused: null,
    connectDurationNs: null,
    ackNs: null,
    responseStreamed: true,
    chunks: [chunk(1100, 'hello '), chunk(1110, 'big '), chunk(1120, 'world')],
    streamEndNs: null,
    endNs: 1200 * MS,
    usage: null,
    finishReason: 'stop',
    inputTokens: 40,
    requestedOutputTokens: null,
    httpStatus: 200,
    parseErrors: 0,
    error: null,
    cancelled: false,
    ...over,
  };
}

const ctx = { tokenizer: null, useServerTokenCount: false };

test('ISL: client prompt length, server prompt_tokens with --use-server-token-count, usage fallback', () => {
  const usage = { prompt_tokens: 44, completion_tokens: 3 };
  assert.equal(countTokens(raw({ usage }), ctx).isl, 40);
  assert.equal(countTokens(raw({ usage }), { ...ctx, useServerTokenCount: true }).isl, 44);
  assert.equal(countTokens(raw({ usage, inputTokens: null }), ctx).isl, 44);
  assert.equal(countTokens(raw({ inputTokens: null }), ctx).isl, undefined);
});

test('OSL: server completion_tokens first, reasoning from completion_tokens_details', () => {
  const usage = { completion_tokens: 30, completion_tokens_details: { reasoning_tokens: 12 } };
  const t = countTokens(raw({ usage }), { ...ctx, tokenizer: words });
  assert.equal(t.osl, 30);
  assert.equal(t.reasoning, 12);
  assert.equal(t.clientOsl, 3); // "hello big world" = 3 words, kept for the discrepancy metric
});

test('OSL: tokenizer count of concatenated text plus reasoning text, else one token per chunk', () => {
  // text "hel" + "lo there" joins to "hello there" (2 words); reasoning "a b c" is 3 words → OSL 5.
  const chunks = [chunk(1100, '', 'a b '), chunk(1105, '', 'c'), chunk(1110, 'hel'), chunk(1120, 'lo there')];
  const t = countTokens(raw({ chunks }), { ...ctx, tokenizer: words });
  assert.equal(t.osl, 5);
  assert.equal(t.reasoning, 3);
  const noTok = countTokens(raw({ chunks }), ctx);
  assert.equal(noTok.osl, 4); // 4 chunks
  assert.equal(noTok.reasoning, 2); // 2 chunks without output text
  assert.equal(noTok.clientOsl, undefined);
});

test('processed record: metrics, output text dropped, discrepancy percentages', () => {
  const r = raw({
    usage: { prompt_tokens: 50, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 32 } },
  });
  const p = processRecord(r, { ...ctx, tokenizer: words, streaming: true, perChunkUsage: false });
  assert.equal(p.valid, true);
  assert.equal(p.raw.chunkCount, 3);
  assert.equal('chunks' in p.raw, false);
  assert.equal(p.metrics.input_sequence_length, 40);
  assert.equal(p.metrics.usage_prompt_tokens, 50);
  assert.equal(p.metrics.usage_cached_tokens, 32);
  assert.equal(p.metrics.usage_prompt_tokens_diff_pct, 25); // |50 − 40|/40·100
  assert.equal(p.metrics.usage_completion_tokens_diff_pct, 0); // server 3, client 3 words
  assert.equal(p.metrics.reasoning_token_count, undefined);
});

test('osl_mismatch_diff_pct is signed (OSL − requested)/requested·100', () => {
  const p = processRecord(raw({ requestedOutputTokens: 4 }), {
    ...ctx,
    streaming: true,
    perChunkUsage: false,
  });
  assert.equal(p.metrics.osl_mismatch_diff_pct, -25); // (3 − 4)/4·100
});

test('failed records get only error_isl (and error_time_to_first_token after a first token); cancelled and empty records get an explicit error', () => {
  const error = {
    kind: 'http_status' as const,
    code: 500,
    type: 'Internal Server Error',
    message: 'boom',
    failedAtNs: 0,
  };
  const failed = processRecord(raw({ error, chunks: [] }), { ...ctx, streaming: true, perChunkUsage: false });
  assert.equal(failed.valid, false);
  assert.deepEqual(failed.metrics, { error_isl: 40 });
  const cutShort = processRecord(raw({ error }), { ...ctx, streaming: true, perChunkUsage: false });
  assert.deepEqual(cutShort.metrics, { error_isl: 40, error_time_to_first_token: 100 });
  const notStreaming = processRecord(raw({ error }), { ...ctx, streaming: false, perChunkUsage: false });
  assert.deepEqual(notStreaming.metrics, { error_isl: 40 });
  const cancelled = processRecord(raw({ cancelled: true }), {
    ...ctx,
    streaming: true,
    perChunkUsage: false,
  });
  assert.equal(cancelled.valid, false);
  assert.equal(cancelled.raw.error?.code, 499);
  const empty = processRecord(raw({ chunks: [] }), { ...ctx, streaming: true, perChunkUsage: false });
  assert.equal(empty.valid, false);
  assert.equal(empty.raw.error?.kind, 'no_content');
});
