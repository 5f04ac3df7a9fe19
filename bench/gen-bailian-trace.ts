/**
 * Writes a large synthetic Bailian-format trace (default 1,000,000 rows, to /tmp — never commit it)
 * whose fields are resampled from the real example rows (examples/traces/bailian_*.jsonl):
 * inter-arrival gaps, input/output lengths, request type and turn; hash_ids keep each sampled row's
 * share of prefix blocks (ids below 6000 in the examples are shared system-prompt blocks) and get
 * fresh unique ids for the rest, 16 tokens per block as in the examples. The gap distribution is
 * rescaled to `--rate` req/s on average. Seeded, streamed to disk.
 *
 *   node --import tsx bench/gen-bailian-trace.ts --rows 1000000 --out /tmp/bailian_1m.jsonl
 */
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { arg } from './common.js';

interface Row {
  timestamp: number;
  input_length: number;
  output_length: number;
  type?: string;
  turn?: number;
  hash_ids: number[];
}

const SHARED_BELOW = 6000;
const rowsWanted = Number(arg('rows', '1000000'));
const out = arg('out', '/tmp/bailian_1m.jsonl');
/** Mean arrival rate, req/s: the example gaps are rescaled to it (the examples are a sparse sample). */
const ratePerS = Number(arg('rate', '20'));
const dir = 'examples/traces';
const source: Row[] = readdirSync(dir)
  .filter((f) => f.startsWith('bailian_') && f.endsWith('.jsonl'))
  .flatMap((f) => readFileSync(`${dir}/${f}`, 'utf8').split('\n'))
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Row);
const times = source.map((r) => r.timestamp).sort((a, b) => a - b);
const rawGaps = times
  .slice(1)
  .map((t, i) => t - (times[i] as number))
  .filter((g) => g >= 0);
const meanGap = rawGaps.reduce((a, b) => a + b, 0) / Math.max(1, rawGaps.length);
const gaps = rawGaps.map((g) => g / meanGap / ratePerS);

let state = 12345;
const next = (): number => {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return state / 4294967296;
};
const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;

const stream = createWriteStream(out);
let t = 0;
let freshId = 1_000_000;
for (let i = 0; i < rowsWanted; i++) {
  const row = pick(source);
  t += pick(gaps);
  const shared = row.hash_ids.filter((id) => id < SHARED_BELOW);
  const ids = [...shared];
  for (let k = shared.length; k < row.hash_ids.length; k++) ids.push(freshId++);
  const line = {
    chat_id: i,
    parent_chat_id: -1,
    timestamp: Math.round(t * 1000) / 1000,
    input_length: row.input_length,
    output_length: row.output_length,
    type: row.type ?? 'text',
    turn: 1,
    hash_ids: ids,
  };
  if (!stream.write(`${JSON.stringify(line)}\n`))
    await new Promise<void>((r) => stream.once('drain', () => r()));
}
stream.end();
await new Promise<void>((r) => stream.once('finish', () => r()));
console.log(JSON.stringify({ rows: rowsWanted, out, sourceRows: source.length, spanSeconds: Math.round(t) }));
