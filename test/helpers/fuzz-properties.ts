/**
 * Fuzz properties shared by the bounded unit tests (`test/unit/fuzz-*.test.ts`) and the long runner
 * (`bench/fuzz.ts`): the SSE decoder, the record builder's failure classification and the Bailian /
 * Mooncake loaders, fed random, split, truncated and mutated input.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { RecordBuilder } from '../../src/client/record-builder.js';
import { SseDecoder } from '../../src/client/sse-decoder.js';
import type { SendRequest } from '../../src/client/types.js';
import { loadBailianTrace } from '../../src/dataset/bailian.js';
import { loadMooncakeTrace } from '../../src/dataset/mooncake.js';
import { type Dataset, DatasetError, type LoadOptions } from '../../src/dataset/types.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import { effectiveError, type StopReason } from '../../src/record/failure.js';
import type { ErrorKind, RawRecord } from '../../src/record/types.js';
import { loadFixtures } from './fixture-player.js';

/** A property plus the name it is reported under. */
export interface NamedProperty {
  name: string;
  property: fc.IRawProperty<unknown, boolean>;
  /** Outcome tallies the property keeps while it runs (for the long runner's report). */
  counts: Record<string, number>;
}

function tally(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

// ---------------------------------------------------------------------------------------------
// SSE decoder

/** Bodies of the recorded SSE fixtures (bytes as written by the fixture server). */
export function fixtureBodies(): Uint8Array[] {
  const bodies: Uint8Array[] = [];
  for (const fixture of loadFixtures()) {
    const writes = fixture.response.writes ?? [];
    if (writes.length === 0) continue;
    const parts = writes.map((w) =>
      w.hex !== undefined ? Buffer.from(w.hex, 'hex') : Buffer.from(w.data ?? '', 'utf8'),
    );
    bodies.push(new Uint8Array(Buffer.concat(parts)));
  }
  return bodies;
}

/** Sorted cut positions inside `[0, length]`. */
function cutsFor(length: number): fc.Arbitrary<number[]> {
  return fc
    .uniqueArray(fc.integer({ min: 0, max: length }), { maxLength: 40 })
    .map((c) => c.sort((a, b) => a - b));
}

interface Decoded {
  events: { event: string; data: string }[];
  endCalled: boolean;
}

/** Feeds `body` in reads cut at `cuts`, then ends it; returns every event. */
function decode(body: Uint8Array, cuts: readonly number[]): Decoded {
  const decoder = new SseDecoder();
  const events: { event: string; data: string }[] = [];
  let from = 0;
  for (const cut of [...cuts, body.length]) {
    for (const e of decoder.push(body.subarray(from, cut), from))
      events.push({ event: e.event, data: e.data });
    from = cut;
  }
  const end = decoder.end(body.length);
  for (const e of end.events) events.push({ event: e.event, data: e.data });
  return { events, endCalled: typeof end.midEvent === 'boolean' };
}

/** Bytes biased towards SSE syntax (field names, colons, CR/LF, multi-byte UTF-8, invalid bytes). */
function sseishBytes(): fc.Arbitrary<Uint8Array> {
  const piece = fc.oneof(
    fc.constantFrom(
      'data:',
      'data: ',
      'event:',
      'event: error',
      'id: 1',
      'retry: 5',
      ':',
      '[DONE]',
      '{',
      '}',
    ),
    fc.constantFrom('\n', '\r', '\r\n', '\n\n', '\r\r', ' ', '\u00e9', '\u{1F642}', '\uFEFF'),
    fc.string({ maxLength: 12 }),
  );
  const text = fc.array(piece, { maxLength: 40 }).map((p) => Buffer.from(p.join(''), 'utf8'));
  const raw = fc.uint8Array({ maxLength: 200 });
  return fc.oneof(
    text,
    raw,
    fc.tuple(text, raw).map(([a, b]) => Buffer.concat([a, b])),
  );
}

/** Random and SSE-like bytes in random reads: the decoder never throws and `end()` always returns. */
export function sseRandomBytesProperty(): NamedProperty {
  const input = sseishBytes().chain((body) => fc.tuple(fc.constant(body), cutsFor(body.length)));
  const counts: Record<string, number> = {};
  return {
    name: 'sse: random bytes, random reads',
    counts,
    property: fc.property(input, ([body, cuts]) => {
      const { events, endCalled } = decode(new Uint8Array(body), cuts);
      tally(counts, events.length === 0 ? 'no events' : 'events');
      for (const e of events) if (typeof e.data !== 'string' || e.event === '') return false;
      return endCalled;
    }),
  };
}

/**
 * A real fixture stream cut off at a random byte and read in random pieces: no throw, `end()`
 * returns, and every event but the last equals the matching event of the whole stream (the last may
 * be a partial event that `end()` flushed).
 */
export function sseTruncatedFixtureProperty(): NamedProperty {
  const bodies = fixtureBodies();
  const whole = bodies.map((b) => decode(b, []).events);
  const input = fc.nat({ max: bodies.length - 1 }).chain((index) => {
    const length = bodies[index]?.length ?? 0;
    return fc
      .integer({ min: 0, max: length })
      .chain((cutAt) => fc.tuple(fc.constant(index), fc.constant(cutAt), cutsFor(cutAt)));
  });
  const counts: Record<string, number> = {};
  return {
    name: 'sse: truncated fixture streams',
    counts,
    property: fc.property(input, ([index, cutAt, cuts]) => {
      const body = (bodies[index] as Uint8Array).subarray(0, cutAt);
      const { events, endCalled } = decode(body, cuts);
      const full = whole[index] ?? [];
      tally(counts, events.length === full.length ? 'all events' : 'fewer events');
      if (!endCalled || events.length > full.length) return false;
      for (let i = 0; i < events.length - 1; i++) {
        const a = events[i];
        const b = full[i];
        if (a?.event !== b?.event || a?.data !== b?.data) return false;
      }
      return true;
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Record builder

const ERROR_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'http_status',
  'in_band_error',
  'malformed_event',
  'event_too_large',
  'timeout',
  'connection_reset',
  'stream_incomplete',
  'no_content',
  'unreadable_body',
  'connection_error',
  'cancelled',
  'client_error',
]);

/** One step of a simulated HTTP exchange after the headers. */
type Step = { kind: 'data'; bytes: Uint8Array } | { kind: 'nothing' };

/** How the exchange ends. */
type Ending = { kind: 'end' } | { kind: 'stop'; reason: StopReason };

function chunkJson(): fc.Arbitrary<string> {
  const choice = fc.record({
    index: fc.constantFrom(0, 0, 0, 1),
    delta: fc.oneof(
      fc.record({ content: fc.oneof(fc.string({ maxLength: 6 }), fc.constant(null)) }),
      fc.record({ role: fc.constant('assistant'), content: fc.constant(null) }),
      fc.record({ reasoning_content: fc.string({ maxLength: 6 }) }),
      fc.constant({}),
    ),
    finish_reason: fc.constantFrom(null, null, 'stop', 'length'),
  });
  const usage = fc.record({
    prompt_tokens: fc.nat({ max: 50 }),
    completion_tokens: fc.nat({ max: 50 }),
  });
  return fc.oneof(
    fc
      .record({ choices: fc.array(choice, { maxLength: 2 }), usage: fc.option(usage) })
      .map((c) => JSON.stringify({ object: 'chat.completion.chunk', ...c })),
    fc.constant('[DONE]'),
    fc.constant('{"error":{"message":"boom","code":503}}'),
    fc.constant('{"object":"error","message":"bad","code":"x"}'),
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 10 }),
  );
}

function sseEventText(): fc.Arbitrary<string> {
  return fc.oneof(
    chunkJson().map((d) => `data: ${d}\n\n`),
    chunkJson().map((d) => `event: error\ndata: ${d}\n\n`),
    fc.constantFrom(': keep-alive\n\n', '\n', 'data: [DONE]\n\n', 'event: ping\n\n', 'data: {"choi'),
  );
}

/** A well-formed chat stream (content chunks, a finish chunk, `[DONE]`) cut into random reads. */
function wellFormedSteps(): fc.Arbitrary<Step[]> {
  const body = fc
    .array(fc.string({ minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 })
    .map((tokens) => {
      const chunk = (delta: object, finish: string | null): string =>
        `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const text = tokens.map((t) => chunk({ content: t }, null)).join('');
      return Buffer.from(`${text}${chunk({}, 'stop')}data: [DONE]\n\n`, 'utf8');
    });
  return body.chain((b) =>
    cutsFor(b.length).map((cuts) => {
      const out: Step[] = [];
      let from = 0;
      for (const cut of [...cuts, b.length]) {
        out.push({ kind: 'data', bytes: new Uint8Array(b.subarray(from, cut)) });
        from = cut;
      }
      return out;
    }),
  );
}

function steps(): fc.Arbitrary<Step[]> {
  const bytes = fc.oneof(
    fc.array(sseEventText(), { maxLength: 8 }).map((e) => new Uint8Array(Buffer.from(e.join(''), 'utf8'))),
    fc.uint8Array({ maxLength: 40 }),
  );
  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 5, arbitrary: bytes.map((b) => ({ kind: 'data' as const, bytes: b })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'nothing' as const }) },
  );
  return fc.oneof(fc.array(step, { maxLength: 10 }), wellFormedSteps());
}

function ending(): fc.Arbitrary<Ending> {
  const reason: fc.Arbitrary<StopReason> = fc.oneof(
    fc.constant<StopReason>({ kind: 'timeout', timeoutMs: 100 }),
    fc.constant<StopReason>({ kind: 'cancelled' }),
    fc.constant<StopReason>({ kind: 'cancelled', reason: new Error('stop') }),
    fc.constantFrom('ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNREFUSED', undefined).map((code) => {
      const error = Object.assign(new Error('socket'), code === undefined ? {} : { code });
      return { kind: 'transport' as const, error };
    }),
    fc.constant<StopReason>({ kind: 'transport', error: 'not an error object' }),
  );
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant<Ending>({ kind: 'end' }) },
    { weight: 1, arbitrary: reason.map((r) => ({ kind: 'stop' as const, reason: r })) },
  );
}

function sendRequest(stream: boolean, endpoint: 'chat' | 'completions'): SendRequest {
  return {
    identity: {
      conversationId: 'c',
      turnIndex: 0,
      sessionNum: 0,
      xRequestId: 'x',
      xCorrelationId: 'y',
      model: 'm',
      scheduledNs: null,
      inputTokens: 3,
      requestedOutputTokens: 4,
    },
    path: '/v1/chat/completions',
    headers: {},
    body: '{}',
    stream,
    adapter: ENDPOINTS[endpoint],
    timeoutMs: 1000,
  };
}

/** True when the record carries exactly one classification: success with content, or one known error. */
export function hasOneClassification(raw: RawRecord): boolean {
  const error = effectiveError(raw);
  if (error === null) return raw.error === null && !raw.cancelled && raw.chunks.length > 0;
  return ERROR_KINDS.has(error.kind) && Number.isInteger(error.code) && typeof error.type === 'string';
}

/**
 * Random exchanges (headers or none, status, content type, SSE/JSON/garbage reads, then a clean end
 * or a stop for timeout / cancel / transport error): the builder never throws and the record always
 * ends with exactly one classification.
 */
export function recordBuilderProperty(): NamedProperty {
  const headers = fc.option(
    fc.record({
      status: fc.constantFrom(200, 200, 200, 429, 500, 503, 404),
      contentType: fc.constantFrom('text/event-stream', 'application/json', 'text/plain', ''),
      retryAfter: fc.option(fc.constantFrom('1', '0', 'soon')),
    }),
    { freq: 6 },
  );
  const input = fc.record({
    stream: fc.boolean(),
    endpoint: fc.constantFrom<'chat' | 'completions'>('chat', 'completions'),
    headers,
    steps: steps(),
    ending: ending(),
  });
  const counts: Record<string, number> = {};
  return {
    name: 'record builder: random exchanges',
    counts,
    property: fc.property(input, (x) => {
      const builder = new RecordBuilder(sendRequest(x.stream, x.endpoint));
      let t = 1;
      if (x.headers !== null) {
        const h: Record<string, string> = { 'content-type': x.headers.contentType };
        if (x.headers.retryAfter !== null) h['retry-after'] = x.headers.retryAfter;
        builder.onHeaders(x.headers.status, h, '', t++);
        for (const s of x.steps) if (s.kind === 'data') builder.onData(Buffer.from(s.bytes), t++);
      }
      const raw =
        x.ending.kind === 'end' && x.headers !== null ? builder.end(t) : builder.stop(stopOf(x.ending), t);
      tally(counts, effectiveError(raw)?.kind ?? 'success');
      // A record that failed at an unreadable event ends at that event.
      const unreadable = raw.error?.kind === 'malformed_event' || raw.error?.kind === 'event_too_large';
      return hasOneClassification(raw) && raw.endNs === (unreadable ? raw.error?.failedAtNs : t);
    }),
  };
}

function stopOf(e: Ending): StopReason {
  return e.kind === 'stop' ? e.reason : { kind: 'transport', error: new Error('closed') };
}

// ---------------------------------------------------------------------------------------------
// Loaders

/** Which trace loader a loader property exercises. */
export type LoaderKind = 'bailian' | 'mooncake';

const SAMPLES: Record<LoaderKind, string> = {
  bailian: 'examples/traces/bailian_traceA_multiturn_head40.jsonl',
  mooncake: 'examples/traces/mooncake_conversation_trace.jsonl',
};

const LOADERS: Record<LoaderKind, (file: string, o: LoadOptions) => Promise<Dataset>> = {
  bailian: loadBailianTrace,
  mooncake: loadMooncakeTrace,
};

/** First `count` lines of a sample trace. */
function sampleLines(kind: LoaderKind, count: number): string[] {
  return readFileSync(SAMPLES[kind], 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .slice(0, count);
}

type Mutation =
  | { kind: 'truncate'; line: number; at: number }
  | { kind: 'char'; line: number; at: number; text: string }
  | { kind: 'field'; line: number; field: string; value: unknown }
  | { kind: 'drop-field'; line: number; field: string }
  | { kind: 'insert'; line: number; text: string }
  | { kind: 'delete'; line: number };

const FIELDS = [
  'chat_id',
  'parent_chat_id',
  'timestamp',
  'delay',
  'input_length',
  'output_length',
  'hash_ids',
  'type',
  'turn',
  'session_id',
  'text_input',
  'messages',
  'payload',
  'tools',
  'message_mode',
  'extra',
];

function oddValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(-1, 0, 1, 1.5, 1e300, -0, Number.MAX_SAFE_INTEGER + 2, '', '7', true, null, [], {}),
    fc.array(fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 3 })), { maxLength: 5 }),
    fc.constant([{ role: 'user', content: 'hi' }]),
  );
}

function mutation(lines: number): fc.Arbitrary<Mutation> {
  const line = fc.nat({ max: Math.max(0, lines - 1) });
  return fc.oneof(
    fc.record({ kind: fc.constant('truncate' as const), line, at: fc.nat({ max: 400 }) }),
    fc.record({
      kind: fc.constant('char' as const),
      line,
      at: fc.nat({ max: 400 }),
      text: fc.constantFrom('"', '{', '}', ',', ':', '\\', '\u0000', '\r', 'x', '-', '9', '\u{1F642}'),
    }),
    fc.record({
      kind: fc.constant('field' as const),
      line,
      field: fc.constantFrom(...FIELDS),
      value: oddValue(),
    }),
    fc.record({ kind: fc.constant('drop-field' as const), line, field: fc.constantFrom(...FIELDS) }),
    fc.record({
      kind: fc.constant('insert' as const),
      line,
      text: fc.oneof(
        fc.string({ maxLength: 30 }),
        fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
        fc.constantFrom('', '   ', '\uFEFF{}', 'version https://git-lfs.github.com/spec/v1', '\r'),
      ),
    }),
    fc.record({ kind: fc.constant('delete' as const), line }),
  );
}

function applyMutation(lines: string[], m: Mutation): void {
  const text = lines[m.line];
  if (m.kind === 'insert') {
    lines.splice(Math.min(m.line, lines.length), 0, m.text);
    return;
  }
  if (text === undefined) return;
  if (m.kind === 'delete') lines.splice(m.line, 1);
  else if (m.kind === 'truncate') lines[m.line] = text.slice(0, m.at % (text.length + 1));
  else if (m.kind === 'char') {
    const at = m.at % (text.length + 1);
    lines[m.line] = text.slice(0, at) + m.text + text.slice(at + 1);
  } else {
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row)) return;
    if (m.kind === 'field') row[m.field] = m.value;
    else delete row[m.field];
    lines[m.line] = JSON.stringify(row);
  }
}

function loadOptions(): fc.Arbitrary<LoadOptions> {
  return fc.record(
    {
      speedupRatio: fc.constantFrom(1, 10, 0.5),
      skipBadLines: fc.boolean(),
      endOffsetMs: fc.constantFrom(0, 1000, 100_000),
      startOffsetMs: fc.constantFrom(0, 500),
    },
    { requiredKeys: ['speedupRatio', 'skipBadLines'] },
  );
}

/** Rejects when `promise` has not settled after `ms` (a hang shows as a failure, not a stuck run). */
async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`loader did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** Checks a loader outcome: a dataset, or a DatasetError naming this file (and a line inside it). */
function acceptableOutcome(outcome: Dataset | unknown, file: string, lineCount: number): boolean {
  if (!(outcome instanceof Error)) return (outcome as Dataset).turnCount > 0;
  if (!(outcome instanceof DatasetError)) return false;
  if (outcome.file !== file || !outcome.message.includes(file)) return false;
  if (outcome.line === undefined) return /no usable rows|offset window|option /.test(outcome.message);
  const named = outcome.message.includes(`${file}:${outcome.line}`) || outcome.message.includes('Git LFS');
  return outcome.line >= 1 && outcome.line <= lineCount && named;
}

/**
 * A sample trace's first lines, mutated (truncated lines, stray characters, fields set to odd values
 * or dropped, inserted junk lines, deleted lines; optional CRLF and BOM), written to a temp file and
 * loaded with random options: the loader returns a dataset or throws a `DatasetError` naming the
 * file and a line inside it, never another exception, never hangs.
 * @param dir folder for the temp files (the caller removes it)
 */
export function loaderProperty(kind: LoaderKind, dir: string): NamedProperty {
  const base = sampleLines(kind, 12);
  const input = fc.record({
    take: fc.integer({ min: 0, max: base.length }),
    mutations: fc.array(mutation(base.length), { maxLength: 4 }),
    crlf: fc.boolean(),
    trailingNewline: fc.boolean(),
    options: loadOptions(),
  });
  let n = 0;
  const counts: Record<string, number> = {};
  return {
    name: `loader: ${kind} mutated lines`,
    counts,
    property: fc.asyncProperty(input, async (x) => {
      const lines = base.slice(0, x.take);
      for (const m of x.mutations) applyMutation(lines, m);
      const eol = x.crlf ? '\r\n' : '\n';
      const file = join(dir, `${kind}-${n++}.jsonl`);
      const text = lines.join(eol) + (x.trailingNewline ? eol : '');
      writeFileSync(file, text);
      let outcome: unknown;
      try {
        outcome = await settleWithin(LOADERS[kind](file, x.options), 10_000);
      } catch (err) {
        outcome = err;
      }
      rmSync(file, { force: true });
      tally(counts, outcome instanceof Error ? outcome.name : 'loaded');
      return acceptableOutcome(outcome, file, lineBreaks(text) + 1);
    }),
  };
}

/** Upper bound of the line count a reader can see: every CR and LF counted as a break. */
function lineBreaks(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) count++;
  }
  return count;
}

/** A fresh temp folder for loader files. */
export function fuzzTempDir(): string {
  return mkdtempSync(join(tmpdir(), 'tokenload-fuzz-'));
}
