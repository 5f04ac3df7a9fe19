/**
 * Micro-benchmarks of the three CPU-heavy pieces, each timed after a warm-up:
 * - prompt synthesis (tokens/s): `PromptSynthesizer.synthesize` on the example Mooncake rows, and on
 *   Bailian-shaped rows whose 16-token blocks are all new (the uncached worst case);
 * - fast encoder (tokens/s): `TextTokenizer.encode` of synthesized prompts;
 * - SSE decode (events/s): `SseDecoder.push` on a recorded 22-event chat stream, split into 4 reads;
 * - record building (events/s): the same reads through `RecordBuilder` with the chat adapter
 *   (decode, parse in place, stamp, record), as the client does per response.
 *
 *   npm run bench:micro -- --seconds 2
 */
import { readFileSync } from 'node:fs';
import { RecordBuilder } from '../src/client/record-builder.js';
import { SseDecoder } from '../src/client/sse-decoder.js';
import { ENDPOINTS } from '../src/endpoint/registry.js';
import { PromptSynthesizer } from '../src/prompt/synthesizer.js';
import { loadTokenizer } from '../src/prompt/tokenizer.js';
import { oneOffIdentity } from '../test/helpers/send-once.js';
import { arg, machine } from './common.js';

const seconds = Number(arg('seconds', '2'));

/** Runs `work` (returning units done) for `seconds` after a 0.3 s warm-up; units per second. */
function rate(work: () => number): number {
  const warmEnd = performance.now() + 300;
  while (performance.now() < warmEnd) work();
  let units = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  while (performance.now() < end) units += work();
  return Math.round(units / ((performance.now() - t0) / 1000));
}

interface Row {
  input_length: number;
  hash_ids: number[];
}

const rows = readFileSync('examples/traces/mooncake_conversation_trace.jsonl', 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Row);
const tokenizer = loadTokenizer('builtin:qwen3');
let n = 0;
const synthesizer = PromptSynthesizer.create(tokenizer, 1);
const synthesisTokensPerS = rate(() => {
  const row = rows[n++ % rows.length] as Row;
  return synthesizer.synthesize(row.input_length, row.hash_ids, 512, `k${n}`).tokens;
});
// Every block new: Bailian-shaped prompts (2,000 tokens, 16-token blocks) whose ids after the first
// four were never seen, so each call generates 121 blocks (the cost while a trace streams new prefixes).
let nextId = 1_000_000;
const synthesisNewBlocksTokensPerS = rate(() => {
  const ids = Array.from({ length: 125 }, (_, b) => (b < 4 ? b : nextId++));
  return synthesizer.synthesize(2000, ids, 16, `b${nextId}`).tokens;
});
const texts = rows
  .slice(0, 20)
  .map((row, i) => synthesizer.synthesize(row.input_length, row.hash_ids, 512, `t${i}`).text);
const encoderTokensPerS = rate(() => tokenizer.encode(texts[n++ % texts.length] as string).length);

const chunk = (content: string, finish: string | null) =>
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":${finish === null ? 'null' : `"${finish}"`}}]}\n\n`;
let stream = '';
for (let i = 0; i < 21; i++) stream += chunk(` t${i % 10}`, i === 20 ? 'stop' : null);
const bytes = Buffer.from(`${stream}data: [DONE]\n\n`);
const quarter = Math.ceil(bytes.length / 4);
const reads = [0, 1, 2, 3].map((i) => bytes.subarray(i * quarter, Math.min(bytes.length, (i + 1) * quarter)));
const sseEventsPerS = rate(() => {
  const decoder = new SseDecoder();
  let events = 0;
  for (const read of reads) events += decoder.push(read, 0).length;
  return events;
});
const identity = oneOffIdentity('m');
const sseHeaders = { 'content-type': 'text/event-stream' };
const recordEventsPerS = rate(() => {
  const builder = new RecordBuilder({
    identity,
    path: '/v1/chat/completions',
    headers: {},
    body: '',
    stream: true,
    adapter: ENDPOINTS.chat,
    timeoutMs: 1000,
  });
  builder.onHeaders(200, sseHeaders, 'OK', 1);
  for (let i = 0; i < reads.length; i++) builder.onData(reads[i] as Buffer, i + 2);
  builder.end(reads.length + 2);
  return 22;
});

console.log(
  JSON.stringify(
    {
      benchmark: 'micro',
      machine: machine(),
      method: `${seconds} s per item after 0.3 s warm-up, one thread; synthesis: ${rows.length} Mooncake rows (block 512, blocks repeat, so mostly cached) and Bailian-shaped 2,000-token prompts with 121 never-seen 16-token blocks each, tokenizer builtin:qwen3 (${tokenizer.engine} engine); encoder: 20 synthesized prompts; SSE and record: ${bytes.length} B 22-event chat stream in 4 reads`,
      synthesisTokensPerS,
      synthesisNewBlocksTokensPerS,
      encoderTokensPerS,
      sseEventsPerS,
      recordEventsPerS,
    },
    null,
    2,
  ),
);
