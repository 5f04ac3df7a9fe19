/**
 * Input scale: time to first request and peak RSS of `tokenload profile` replaying the first minute
 * of a large Bailian trace (make one with bench/gen-bailian-trace.ts) against the built-in simulator
 * in fixed mode. Runs the CLI in a child process and polls it: the first line of
 * profile_export.jsonl marks the first completed request; the smallest `request_start_ns` in it,
 * against the epoch time of the spawn, gives the time to the first request sent; VmHWM of
 * /proc/<pid>/status is the peak RSS. `--built` runs `bin/tokenload.js` (run `npm run build`)
 * instead of the sources under tsx, as a user's install would.
 *
 *   npm run bench:input -- --trace /tmp/bailian_1m.jsonl --minutes 1
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, machine, peakRssMiB } from './common.js';

const trace = arg('trace', '/tmp/bailian_1m.jsonl');
const minutes = Number(arg('minutes', '1'));
if (!existsSync(trace)) throw new Error(`${trace} not found: run bench/gen-bailian-trace.ts first`);
const artifactDir = mkdtempSync(join(tmpdir(), 'tokenload-input-'));
const args = [
  'profile',
  '-m',
  'm',
  '--tokenizer',
  'builtin',
  '--simulator',
  '--simulator-option',
  'mode=fixed',
  '--streaming',
  '--input-file',
  trace,
  '--custom-dataset-type',
  'bailian_trace',
  '--fixed-schedule',
  '--fixed-schedule-end-offset',
  String(minutes * 60_000),
  '--ui',
  'none',
  '--artifact-dir',
  artifactDir,
];
const boot = `import(${JSON.stringify(new URL('../src/cli/main.ts', import.meta.url).href)}).then(async (m) => { process.exitCode = await m.main(process.argv); });`;
const built = process.argv.includes('--built');
const t0 = performance.now();
const t0EpochNs = BigInt(Math.round((performance.timeOrigin + t0) * 1e3)) * 1000n;
const argv = built
  ? [new URL('../bin/tokenload.js', import.meta.url).pathname, ...args]
  : ['--import', 'tsx', '--input-type=module', '-e', boot, '--', 'tokenload', ...args];
const child = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
let stderr = '';
child.stderr.on('data', (d: Buffer) => {
  stderr += d.toString();
});
const records = join(artifactDir, 'profile_export.jsonl');
let firstRecordS: number | null = null;
let peak: number | null = null;
const poll = setInterval(() => {
  peak = peakRssMiB(child.pid as number) ?? peak;
  if (firstRecordS === null && existsSync(records) && statSync(records).size > 0)
    firstRecordS = (performance.now() - t0) / 1000;
}, 50);
const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
clearInterval(poll);
const totalS = (performance.now() - t0) / 1000;
const text = existsSync(records) ? readFileSync(records, 'utf8') : '';
const lines = text.split('\n').length - 1;
/** Seconds from spawn to the earliest request_start_ns in the records (read as exact integers). */
function firstSendS(): number | null {
  let min: bigint | null = null;
  for (const m of text.matchAll(/"request_start_ns":(\d+)/g)) {
    const ns = BigInt(m[1] as string);
    if (min === null || ns < min) min = ns;
  }
  return min === null ? null : Number(min - t0EpochNs) / 1e9;
}
console.log(
  JSON.stringify(
    {
      benchmark: 'input scale',
      machine: machine(),
      method: `tokenload profile --input-file ${trace} (${Math.round(statSync(trace).size / 2 ** 20)} MiB) --custom-dataset-type bailian_trace --fixed-schedule --fixed-schedule-end-offset ${minutes * 60_000} --simulator (fixed mode), ${built ? 'bin/tokenload.js (built)' : 'CLI under tsx'} in a child process; polled every 50 ms`,
      exitCode: code,
      timeToFirstRequestS: firstSendS(),
      timeToFirstRecordS: firstRecordS,
      peakRssMiB: peak,
      totalS: Math.round(totalS * 10) / 10,
      records: lines,
      ...(code === 0 ? {} : { stderrTail: stderr.slice(-2000) }),
    },
    null,
    2,
  ),
);
