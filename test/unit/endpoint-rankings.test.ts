/**
 * The rankings endpoints (`hf_tei_rankings`, `cohere_rankings`, `nim_rankings`) through their
 * adapters: the query and passages taken from a turn's named texts, each API's body, and answers
 * that count as answered (latency only) or as errors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cohereRankings, hfTeiRankings, nimRankings } from '../../src/endpoint/rankings.js';
import type { BodyInput } from '../../src/endpoint/types.js';

const input = (over: Partial<BodyInput> = {}): BodyInput => ({
  model: 'rr',
  messages: [{ role: 'user', content: 'What is AI?\nAI is x\nAI is y' }],
  stream: false,
  maxTokens: 8,
  useLegacyMaxTokens: false,
  perChunkUsage: false,
  extraInputs: { top_n: 2 },
  namedTexts: [
    { name: 'query', contents: ['What is AI?'] },
    { name: 'passages', contents: ['AI is x', 'AI is y'] },
  ],
  ...over,
});

test('rankings bodies: TEI {query, texts}, Cohere {model, query, documents}, NIM {model, query:{text}, passages}', () => {
  assert.deepEqual(hfTeiRankings.buildBody(input()), {
    query: 'What is AI?',
    texts: ['AI is x', 'AI is y'],
    top_n: 2,
  });
  assert.deepEqual(cohereRankings.buildBody(input()), {
    model: 'rr',
    query: 'What is AI?',
    documents: ['AI is x', 'AI is y'],
    top_n: 2,
  });
  assert.deepEqual(nimRankings.buildBody(input()), {
    model: 'rr',
    query: { text: 'What is AI?' },
    passages: [{ text: 'AI is x' }, { text: 'AI is y' }],
    top_n: 2,
  });
});

test('rankings body: "queries" is a query name too; without named texts the last message is the query', () => {
  const queries = input({ namedTexts: [{ name: 'queries', contents: ['q1', 'q2'] }] });
  assert.deepEqual(hfTeiRankings.buildBody({ ...queries, extraInputs: {} }), { query: 'q1', texts: [] });
  const { namedTexts: _drop, ...plain } = input({ extraInputs: {} });
  assert.deepEqual(hfTeiRankings.buildBody(plain), { query: 'What is AI?\nAI is x\nAI is y', texts: [] });
});

test('rankings answers: a result list is a non-token answer; an empty one is not; errors are in-band', () => {
  assert.equal(hfTeiRankings.parse([{ index: 0, score: 0.9 }], false).nonTokenContent, true);
  assert.equal(hfTeiRankings.parse([], false).nonTokenContent, undefined);
  const cohere = cohereRankings.parse(
    { results: [{ index: 1, relevance_score: 0.8 }], usage: { total_tokens: 12 } },
    false,
  );
  assert.equal(cohere.nonTokenContent, true);
  assert.equal(cohere.text, '');
  assert.equal(nimRankings.parse({ rankings: [{ index: 0, logit: 1.5 }] }, false).nonTokenContent, true);
  assert.equal(nimRankings.parse({ results: [{ index: 0 }] }, false).nonTokenContent, undefined);
  assert.equal(cohereRankings.parse({ error: { message: 'bad', code: 400 } }, false).error?.message, 'bad');
  for (const adapter of [hfTeiRankings, cohereRankings, nimRankings]) {
    assert.equal(adapter.streamable, false);
    assert.equal(adapter.generatesTokens, false);
  }
});
