/**
 * Cost of reading trace ids exactly (src/dataset/exact-ids.ts), CPU ms to parse every line of a
 * trace: `JSON.parse` alone (ids beyond 2^53 rounded), and `JSON.parse` plus the exact-id check (and,
 * for rows with large ids, the re-read) as the JSONL reader does it. Run on the trace as it is and on
 * a 64-bit copy made in memory: every `hash_ids` element n becomes n · 0x9E3779B97F4A7C15 mod 2^64
 * (a bijection, so equal ids stay equal; almost all land beyond 2^53). Minimum and median of `--reps`
 * alternating passes, CPU time of this process.
 *
 *   node --import tsx bench/trace-ids.ts --trace examples/traces/mooncake_conversation_trace.jsonl
 */
import { readFileSync } from 'node:fs';
import { hasInexactId, readIdsExactly } from '../src/dataset/exact-ids.js';
import { arg, machine } from './common.js';

const trace = arg('trace', 'examples/traces/mooncake_conversation_trace.jsonl');
const reps = Number(arg('reps', '15'));
const GOLDEN = 0x9e3779b97f4a7c15n;
const MASK = 2n ** 64n - 1n;

function toBigIds(line: string): string {
  return line.replace(/"hash_ids":\s*\[([^\]]*)\]/, (_m, body: string) => {
    const ids = body
      .split(',')
      .filter((s) => s.trim() !== '')
      .map((s) => ((BigInt(s.trim()) * GOLDEN) & MASK).toString());
    return `"hash_ids": [${ids.join(', ')}]`;
  });
}

let sink = 0;
function parseOnly(lines: readonly string[]): void {
  for (const l of lines) sink += (JSON.parse(l) as { input_length?: number }).input_length ?? 0;
}
function parseExact(lines: readonly string[]): void {
  for (const l of lines) {
    const row = JSON.parse(l) as Record<string, unknown>;
    if (hasInexactId(row)) readIdsExactly(l, row);
    sink += (row.input_length as number | undefined) ?? 0;
  }
}
function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const small = readFileSync(trace, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '');
const big = small.map(toBigIds);
const cases = {
  'small ids, JSON.parse': () => parseOnly(small),
  'small ids, exact read': () => parseExact(small),
  '64-bit ids, JSON.parse (rounded)': () => parseOnly(big),
  '64-bit ids, exact read': () => parseExact(big),
};
const times = new Map<string, number[]>(Object.keys(cases).map((k) => [k, []]));
for (let r = 0; r < reps; r++)
  for (const [name, run] of Object.entries(cases)) times.get(name)?.push(cpuMs(run));
const figures = Object.fromEntries(
  [...times].map(([name, ms]) => {
    ms.sort((a, b) => a - b);
    return [name, { minMs: ms[0], medianMs: ms[Math.floor(ms.length / 2)] }];
  }),
);
console.log(
  JSON.stringify(
    {
      machine: machine(),
      method: `CPU ms to parse ${small.length} lines of ${trace}, ${reps} alternating passes`,
      figures,
      check: sink > 0,
    },
    null,
    2,
  ),
);
