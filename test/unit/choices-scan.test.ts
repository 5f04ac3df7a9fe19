/**
 * The chat / completions byte fast path (`scanChoices`) against the ordinary path
 * (`adapter.parse(JSON.parse(text), true)`): for random payloads — OpenAI-like chunks with shuffled
 * and duplicated keys, escapes, odd value types and whitespace, plus truncated, mutated and arbitrary
 * text — the fast path either declines (`undefined`) or returns exactly the same result, and it
 * always declines invalid JSON.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { type ChoicesFlavor, scanChoices } from '../../src/endpoint/choices-scan.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import type { ParsedResponse } from '../../src/endpoint/types.js';

/** A tiny PRNG so one generated seed drives the serializer's whitespace and escape choices. */
function prng(seed: number): () => number {
  let x = seed | 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** JSON text of `value` with random whitespace, random `\u` escapes and (optionally) duplicate keys. */
function serialize(value: unknown, random: () => number): string {
  const ws = () => (random() < 0.15 ? [' ', '\n', '\t', '\r', '  '][Math.floor(random() * 5)] : '');
  const str = (s: string) => {
    if (random() < 0.03)
      return `"${[...s].map((ch) => `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`).join('')}"`;
    return JSON.stringify(s);
  };
  const go = (v: unknown): string => {
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => `${ws()}${go(x)}${ws()}`).join(',')}]`;
    if (typeof v === 'object' && v !== null) {
      const parts = Object.entries(v).map(([k, x]) => `${ws()}${str(k)}${ws()}:${ws()}${go(x)}${ws()}`);
      return `{${parts.join(',')}${ws()}}`;
    }
    return JSON.stringify(v) ?? 'null';
  };
  return `${ws()}${go(value)}${ws()}`;
}

const text = fc.oneof(
  fc.constantFrom('', ' tok', 'a"b', 'line\nnext', 'tab\t', 'é', '🙂', '中文', '\\', '/'),
  fc.string({ maxLength: 6 }),
);
const odd = fc.oneof(fc.constant(null), fc.integer(), fc.boolean(), fc.constant([]), fc.constant({}));
const textOrOdd = fc.oneof(text, text, odd);
const delta = fc.record(
  {
    role: fc.constant('assistant'),
    content: textOrOdd,
    reasoning_content: textOrOdd,
    reasoning: textOrOdd,
    tool_calls: fc.oneof(
      fc.constant(null),
      fc.constant(null),
      fc.constant([{ function: { name: 'f', arguments: '{}' } }]),
    ),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);
const choice = fc.record(
  {
    index: fc.oneof(fc.constantFrom(0, 1, 2, 10, -1, 0.5, 1e21), odd, text),
    delta: fc.oneof(delta, delta, odd),
    message: fc.oneof(odd, odd, delta),
    text: textOrOdd,
    finish_reason: fc.oneof(fc.constantFrom(null, 'stop', 'length', ''), odd),
    logprobs: fc.constant(null),
  },
  { requiredKeys: [] },
);
const payload = fc.record(
  {
    id: fc.constantFrom('chatcmpl-1', 'cmpl-x'),
    object: fc.oneof(fc.constantFrom('chat.completion.chunk', 'chat.completion', 'text_completion'), odd),
    created: fc.integer(),
    model: text,
    choices: fc.oneof(fc.array(fc.oneof(choice, choice, choice, odd), { maxLength: 3 }), odd),
    usage: fc.oneof(
      fc.record({ prompt_tokens: fc.nat(), completion_tokens: fc.nat(), total_tokens: fc.nat() }),
      fc.constant({ completion_tokens_details: { reasoning_tokens: 2 }, prompt_tokens_details: null }),
      odd,
    ),
    error: fc.oneof(
      fc.constant(null),
      fc.constant(null),
      fc.constant({ message: 'boom', code: 503 }),
      fc.constant('bad'),
    ),
    message: text,
    code: fc.oneof(fc.constant(500), text),
  },
  { requiredKeys: [] },
);

/** A payload that may carry the server's own timing (vLLM `metrics`, llama.cpp `timings`): objects, empty, null, odd values. */
const timedPayload = fc
  .tuple(
    payload,
    fc.record(
      {
        metrics: fc.oneof(
          fc.record(
            { time_to_first_token_ms: fc.oneof(fc.double(), fc.constant(null)), queue_time_ms: fc.nat() },
            { requiredKeys: [] },
          ),
          odd,
        ),
        timings: fc.oneof(
          fc.record(
            { prompt_ms: fc.double(), cache_n: fc.integer(), predicted_ms: fc.nat() },
            { requiredKeys: [] },
          ),
          odd,
        ),
      },
      { requiredKeys: [] },
    ),
  )
  .map(([body, timing]) => ({ ...body, ...timing }));

/** A payload text: structured chunks (some with a duplicated key), then damaged or arbitrary text. */
const payloadText = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(timedPayload, fc.integer()).map(([v, seed]) => serialize(v, prng(seed))) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        timedPayload,
        fc.integer(),
        fc.constantFrom('choices', 'usage', 'object', 'error', 'metrics', 'timings'),
        odd,
      )
      .map(([v, seed, key, x]) =>
        serialize(v, prng(seed)).replace(/}\s*$/, `,"${key}":${JSON.stringify(x)}}`),
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        payload,
        fc.integer(),
        fc.nat(),
        fc.constantFrom('', '"', '{', '}', ',', '\\', ' ', '\u0001', 'x'),
      )
      .map(([v, seed, at, insert]) => {
        const s = serialize(v, prng(seed));
        const cut = at % (s.length + 1);
        return at % 2 === 0 ? s.slice(0, cut) : s.slice(0, cut) + insert + s.slice(cut);
      }),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);

/** Payload bytes: the texts above as UTF-8, and some with one raw byte inserted (invalid UTF-8, controls). */
const payloadBytes = fc.oneof(
  { weight: 4, arbitrary: payloadText.map((t) => Buffer.from(t, 'utf8')) },
  {
    weight: 1,
    arbitrary: fc.tuple(payloadText, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([t, at, byte]) => {
      const b = Buffer.from(t, 'utf8');
      const cut = at % (b.length + 1);
      return Buffer.concat([b.subarray(0, cut), Buffer.of(byte), b.subarray(cut)]);
    }),
  },
);

function ordinary(flavor: ChoicesFlavor, textOf: string): ParsedResponse | 'invalid' {
  let json: unknown;
  try {
    json = JSON.parse(textOf);
  } catch {
    return 'invalid';
  }
  return ENDPOINTS[flavor].parse(json, true);
}

test('scanChoices declines or agrees with adapter.parse(JSON.parse(text)) on random payloads', () => {
  const counts = { fast: 0, declined: 0, invalid: 0 };
  fc.assert(
    fc.property(payloadBytes, fc.constantFrom<ChoicesFlavor>('chat', 'completions'), (payload, flavor) => {
      const bytes = Buffer.concat([Buffer.from('data: '), payload, Buffer.from('\n\nnext')]);
      const body = payload.toString('utf8');
      const start = 6;
      const end = bytes.length - 6;
      const fast = scanChoices(bytes, start, end, flavor);
      const expected = ordinary(flavor, bytes.toString('utf8', start, end));
      if (expected === 'invalid') {
        counts.invalid++;
        assert.equal(fast, undefined, `accepted invalid JSON: ${body}`);
      } else if (fast === undefined) counts.declined++;
      else {
        counts.fast++;
        assert.deepStrictEqual(fast, expected, body);
      }
    }),
    { numRuns: 4000 },
  );
  console.log(counts);
  assert.ok(counts.fast > 800, `fast path taken ${counts.fast} times`);
  assert.ok(counts.invalid > 200, `invalid payloads ${counts.invalid}`);
});

test('a typical vLLM chunk takes the fast path with its content, finish reason and usage', () => {
  const chunk = (body: object) => Buffer.from(JSON.stringify(body));
  const first = chunk({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [
      { index: 0, delta: { content: ' tok', reasoning_content: null }, logprobs: null, finish_reason: null },
    ],
  });
  assert.deepStrictEqual(scanChoices(first, 0, first.length, 'chat'), {
    text: ' tok',
    reasoning: '',
    usage: null,
    finishReason: null,
    error: null,
    choices: [{ index: 0, finishReason: null }],
  });
  const last = chunk({
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });
  const parsed = scanChoices(last, 0, last.length, 'chat');
  assert.equal(parsed?.finishReason, 'stop');
  assert.deepStrictEqual(parsed?.usage, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
});

test('in-band errors, tool calls, message objects and escaped keys are left to the ordinary path', () => {
  for (const body of [
    '{"error":{"message":"boom"}}',
    '{"choices":[{"delta":{"tool_calls":[]}}]}',
    '{"choices":[{"message":{"content":"x"}}]}',
    '{"ch\\u006fices":[]}',
    '[1]',
    '[DONE]',
  ]) {
    const bytes = Buffer.from(body);
    assert.equal(scanChoices(bytes, 0, bytes.length, 'chat'), undefined, body);
  }
});

test('number and literal grammar: the fast path accepts exactly what JSON.parse accepts', () => {
  const values = [
    '0',
    '-0',
    '01',
    '1.',
    '.5',
    '-',
    '1e',
    '1E+2',
    '0.0e-0',
    '12',
    '-3.25',
    '1e400',
    'tru',
    'nul',
  ];
  for (const value of [...values, 'true', 'false', 'null', '"\\u00e9"', '"\\x"', '"\\u12"']) {
    const body = `{"choices":[{"index":${value},"delta":{"content":"a"}}],"x":${value}}`;
    const bytes = Buffer.from(body);
    const expected = ordinary('chat', body);
    const fast = scanChoices(bytes, 0, bytes.length, 'chat');
    if (expected === 'invalid') assert.equal(fast, undefined, body);
    else assert.deepStrictEqual(fast, expected, body);
  }
});

/** Sets the varying text member of the first choice (creating the path) to `value`. */
function withText(payload: Record<string, unknown>, field: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(payload);
  const choices = Array.isArray(copy.choices) ? copy.choices : [];
  const first = (typeof choices[0] === 'object' && choices[0] !== null ? choices[0] : {}) as Record<
    string,
    unknown
  >;
  if (field === 'text') first.text = value;
  else {
    const delta = (typeof first.delta === 'object' && first.delta !== null ? first.delta : {}) as Record<
      string,
      unknown
    >;
    delta[field] = value;
    first.delta = delta;
  }
  choices[0] = first;
  copy.choices = choices;
  return copy;
}

test('with a stream memo, every event of a sequence parses exactly as without one', () => {
  const field = fc.constantFrom('content', 'reasoning_content', 'reasoning', 'text');
  const values = fc.array(fc.oneof(text, odd, fc.constantFrom('"', '\\', 'a\u0001b', '')), {
    minLength: 1,
    maxLength: 8,
  });
  const sequence = fc.tuple(
    payload,
    field,
    values,
    fc.integer(),
    fc.constantFrom<ChoicesFlavor>('chat', 'completions'),
  );
  let hits = 0;
  fc.assert(
    fc.property(sequence, ([base, which, texts, seed, flavor]) => {
      const scratch = { memo: undefined as unknown };
      for (const value of texts) {
        const body = serialize(withText(base as Record<string, unknown>, which, value), prng(seed));
        const bytes = Buffer.from(`data: ${body}\n\n`);
        const end = bytes.length - 2;
        const before = scratch.memo;
        const withMemo = scanChoices(bytes, 6, end, flavor, scratch);
        const without = scanChoices(bytes, 6, end, flavor);
        assert.deepStrictEqual(withMemo, without, body);
        if (before !== undefined && before === scratch.memo && withMemo !== undefined) hits++;
      }
    }),
    { numRuns: 3000 },
  );
  assert.ok(hits > 200, `memo hits ${hits}`);
});

test("a final chunk's server timing takes the fast path: vLLM metrics and llama.cpp timings, by their record names", () => {
  const chunk = (body: object) => Buffer.from(JSON.stringify(body));
  const vllm = chunk({
    object: 'chat.completion.chunk',
    choices: [],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    metrics: {
      time_to_first_token_ms: 85.2,
      generation_time_ms: 1240.5,
      queue_time_ms: 12.3,
      mean_itl_ms: null,
      tokens_per_second: 103.2,
    },
  });
  assert.deepStrictEqual(scanChoices(vllm, 0, vllm.length, 'chat')?.serverTiming, {
    source: 'vllm_metrics',
    ttftMs: 85.2,
    queueMs: 12.3,
    decodeMs: 1240.5,
  });
  const llamacpp = chunk({
    choices: [],
    object: 'chat.completion.chunk',
    timings: { cache_n: 1536, prompt_n: 512, prompt_ms: 452.4, predicted_n: 20, predicted_ms: 398.6 },
  });
  assert.deepStrictEqual(scanChoices(llamacpp, 0, llamacpp.length, 'completions')?.serverTiming, {
    source: 'llamacpp_timings',
    ttftMs: 452.4,
    prefillMs: 452.4,
    decodeMs: 398.6,
    cachedTokens: 1536,
  });
  const empty = chunk({ choices: [], usage: null, metrics: {} });
  assert.equal(
    scanChoices(empty, 0, empty.length, 'chat')?.serverTiming,
    undefined,
    'vLLM without timing sends {}',
  );
});
