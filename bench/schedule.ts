/**
 * Fixed-schedule precision: for each rate, writes a Bailian-format trace of one-turn sessions whose
 * timestamps are `1/rate` s apart (constant) or exponential gaps (poisson), replays it with
 * `--fixed-schedule` (trace streamed) against the simulator in fixed mode in a child process, and
 * reports the send lag (request start − intended send time, absolute), the achieved send rate,
 * both processes' CPU per request and the client's CPU per content chunk.
 *
 *   npm run bench:schedule -- --rates 100,1000,5000 --patterns constant,poisson --seconds 5
 *
 * The simulator streams like a server: first token after `--ttft-ms` (default 20), then one token
 * every `--itl-ms` (default 5), each in its own socket write, so the client reads each chunk
 * separately. `--one-write`: the old mode, every token due at once (TTFT 0, ITL 0), each response
 * in one write. `--isl 4000`: longer prompts (default 100 tokens; the first 4 blocks are shared by
 * every row).
 * `--perf-window FROM,TO` records the client with `perf` from FROM to TO seconds after the profiling
 * phase starts and prints where its CPU went (bench/perf-breakdown.ts); start the script as
 * `node --perf-basic-prof --import tsx bench/….ts` so JIT frames have names.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { profileConfig } from '../src/config/schema.js';
import type { StatsSummary } from '../src/metrics/summary.js';
import { CLI_SIMULATOR_WARMUP_MS } from '../src/simulator/options.js';
import { spawnSimulator } from '../src/simulator/spawn.js';
import {
  arg,
  clientCpuFigures,
  describeTiming,
  machine,
  measuredRun,
  perfWindowArg,
  r3,
  streamTiming,
} from './common.js';

const rates = arg('rates', '100,1000,5000').split(',').map(Number);
const patterns = arg('patterns', 'constant,poisson').split(',');
const seconds = Number(arg('seconds', '5'));
const osl = Number(arg('osl', '20'));
const timing = streamTiming();
const perfWindow = perfWindowArg();
const precision = arg('precision', 'timer') as 'timer' | 'spin';
const ISL = Number(arg('isl', '100'));

/** Trace timestamps in seconds: constant spacing or seeded exponential gaps. */
function timestamps(rate: number, pattern: string): number[] {
  const n = Math.round(rate * seconds);
  let x = 12345;
  const uniform = (): number => {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
    return (x + 0.5) / 2 ** 32;
  };
  const out: number[] = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    out.push(Math.round(t * 1e6) / 1e6);
    t += pattern === 'poisson' ? -Math.log(uniform()) / rate : 1 / rate;
  }
  return out;
}

function writeTrace(dir: string, rate: number, pattern: string): string {
  const blocks = Math.ceil(ISL / 16);
  const lines = timestamps(rate, pattern).map((ts, i) =>
    JSON.stringify({
      chat_id: i,
      parent_chat_id: -1,
      timestamp: ts,
      input_length: ISL,
      output_length: osl,
      type: 'text',
      turn: 1,
      hash_ids: Array.from({ length: blocks }, (_, b) => (b < 4 ? b : i * blocks + b)),
    }),
  );
  const file = join(dir, `trace-${rate}-${pattern}.jsonl`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const dir = mkdtempSync(join(tmpdir(), 'tokenload-schedule-'));
// Warmed up as `profile --simulator` does (CLI_SIMULATOR_WARMUP_MS), so the run does not start against cold code.
const sim = await spawnSimulator({
  mode: 'fixed',
  ttftMs: timing.ttftMs,
  itlMs: timing.itlMs,
  warmupMs: CLI_SIMULATOR_WARMUP_MS,
});
const rows = [];
for (const rate of rates) {
  for (const pattern of patterns) {
    const config = profileConfig({
      models: ['m'],
      tokenizer: 'builtin',
      url: sim.url,
      streaming: true,
      inputFile: writeTrace(dir, rate, pattern),
      customDatasetType: 'bailian_trace',
      fixedSchedule: true,
      randomSeed: 1,
      requestTimeoutSeconds: 60,
      extraInputs: { ignore_eos: true },
      artifactDir: join(dir, `run-${rate}-${pattern}`),
      timingPrecision: precision,
      commandLine: 'bench/schedule.ts',
    });
    const run = await measuredRun(config, sim.pid, perfWindow === null ? {} : { perfWindowMs: perfWindow });
    const { outcome } = run;
    const m = outcome.summary.metrics;
    const lag = m.schedule_lag as StatsSummary | undefined;
    const sentRate = (m.request_throughput as { avg: number } | undefined)?.avg;
    rows.push({
      targetRatePerS: rate,
      pattern,
      requests: outcome.recordCount,
      requestThroughputPerS: r3(sentRate),
      sendLagMs: { p50: r3(lag?.p50), p90: r3(lag?.p90), p99: r3(lag?.p99), max: r3(lag?.max) },
      errors: (m.error_request_count as { avg: number } | undefined)?.avg ?? 0,
      loopDelayMs: run.loopDelayMs,
      warnings: outcome.summary.warnings.filter((w) => /client|order/i.test(w)),
      ...clientCpuFigures(run, outcome.recordCount),
      ...(run.perf === undefined ? {} : { cpuBreakdown: run.perf }),
      simulatorCpuMsPerRequest: r3(run.simulatorCpuMs / Math.max(1, outcome.recordCount)),
    });
  }
}
await sim.close();
console.log(
  JSON.stringify(
    {
      benchmark: 'fixed-schedule precision',
      machine: machine(),
      method: `tokenload profile --fixed-schedule on a generated Bailian trace (${seconds} s of one-turn sessions, ISL ${ISL}, OSL ${osl} with ignore_eos, timestamps 1/rate apart or exponential), trace streamed, simulator in fixed mode (${describeTiming(timing)}) in a child process, timing precision ${precision}; lag = schedule_lag (request on the wire − intended send time); request throughput as AIPerf defines it; client CPU (process.cpuUsage, all threads) per request over the whole run (start-up and client warm-up included) and per request and per content chunk of the profiling phase alone (from its start to the end of the run); chunks per read from the records' inter-chunk gaps (0 = same read)`,
      rows,
    },
    null,
    2,
  ),
);
