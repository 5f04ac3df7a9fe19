/**
 * Request-rate pacing benchmark: for each target rate and arrival pattern, runs `tokenload profile`
 * with synthetic prompts against the simulator in fixed mode (separate process) and reports the
 * achieved rate, the send lag (request start − intended send time), the client's event-loop delay
 * and its CPU per request and per content chunk.
 *
 *   npm run bench:rate -- --rates 100,1000,5000 --patterns constant,poisson --seconds 5
 *
 * The simulator streams like a server: first token after `--ttft-ms` (default 20), then one token
 * every `--itl-ms` (default 5), each in its own socket write. `--one-write`: the old mode, every
 * token due at once (TTFT 0, ITL 0), each response in one write.
 * `--perf-window FROM,TO` records the client with `perf` from FROM to TO seconds after the profiling
 * phase starts and prints where its CPU went (bench/perf-breakdown.ts); start the script as
 * `node --perf-basic-prof --import tsx bench/….ts` so JIT frames have names.
 *
 * `--sim-cpu-prof DIR` runs the simulator child with `node --cpu-prof` and writes its profile to DIR
 * (profile the client by starting this script with `node --cpu-prof --import tsx bench/rate.ts`).
 * `--warmup-seconds S` runs a warmup phase at the same rate first (not measured; default none), so
 * the figures leave out JIT compilation, first connections and the collection of start-up garbage.
 * CPU per request is then counted over both phases and divided by the requests of both.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProfileConfig } from '../src/config/resolve.js';
import { profileConfig } from '../src/config/schema.js';
import type { StatsSummary, Summary } from '../src/metrics/summary.js';
import { CLI_SIMULATOR_WARMUP_MS } from '../src/simulator/options.js';
import { spawnSimulator } from '../src/simulator/spawn.js';
import type { ArrivalPattern } from '../src/timing/arrivals.js';
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
const patterns = arg('patterns', 'constant,poisson').split(',') as ArrivalPattern[];
const seconds = Number(arg('seconds', '5'));
const osl = Number(arg('osl', '20'));
const precision = arg('precision', 'timer') as 'timer' | 'spin';
const timing = streamTiming();
const perfWindow = perfWindowArg();

const simProfileDir = arg('sim-cpu-prof', '');
const warmupSeconds = Number(arg('warmup-seconds', '0'));

const sim = await spawnSimulator(
  { mode: 'fixed', ttftMs: timing.ttftMs, itlMs: timing.itlMs, warmupMs: CLI_SIMULATOR_WARMUP_MS },
  simProfileDir === '' ? {} : { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', simProfileDir] },
);
const rows = [];
for (const rate of rates) {
  for (const pattern of patterns) {
    const config: ProfileConfig = profileConfig({
      models: ['m'],
      tokenizer: 'builtin',
      url: sim.url,
      streaming: true,
      synthetic: { isl: 100, osl, numDatasetEntries: 100 },
      requestRate: rate,
      arrivalPattern: pattern,
      benchmarkDurationSeconds: seconds,
      randomSeed: 1,
      requestTimeoutSeconds: 60,
      extraInputs: { ignore_eos: true },
      artifactDir: mkdtempSync(join(tmpdir(), 'tokenload-rate-')),
      timingPrecision: precision,
      gracePeriodSeconds: 10,
      ...(warmupSeconds > 0 ? { warmupDurationSeconds: warmupSeconds } : {}),
      commandLine: 'bench/rate.ts',
    });
    const run = await measuredRun(config, sim.pid, perfWindow === null ? {} : { perfWindowMs: perfWindow });
    const { outcome } = run;
    const m = outcome.summary.metrics;
    const cpuRequests = Math.max(1, outcome.recordCount + requestsOf(outcome.warmupSummary));
    const lag = m.schedule_lag as StatsSummary | undefined;
    rows.push({
      targetRatePerS: rate,
      pattern,
      requests: outcome.recordCount,
      achievedRatePerS: r3(outcome.achievedRatePerS ?? undefined),
      achievedVsTargetPct:
        outcome.achievedRatePerS === null ? null : r3((100 * outcome.achievedRatePerS) / rate - 100),
      sendLagMs: { p50: r3(lag?.p50), p99: r3(lag?.p99), max: r3(lag?.max) },
      errors: (m.error_request_count as { avg: number } | undefined)?.avg ?? 0,
      loopDelayMs: run.loopDelayMs,
      warnings: outcome.summary.warnings.filter((w) => /client/i.test(w)),
      ...clientCpuFigures(run, outcome.recordCount, cpuRequests),
      ...(run.perf === undefined ? {} : { cpuBreakdown: run.perf }),
      simulatorCpuMsPerRequest: r3(run.simulatorCpuMs / cpuRequests),
    });
  }
}
await sim.close();

/** Requests (successful and failed) of a phase summary; 0 without one. */
function requestsOf(summary: Summary | null): number {
  if (summary === null) return 0;
  const count = (tag: 'request_count' | 'error_request_count'): number =>
    (summary.metrics[tag] as { avg: number } | undefined)?.avg ?? 0;
  return count('request_count') + count('error_request_count');
}
console.log(
  JSON.stringify(
    {
      benchmark: 'request-rate pacing',
      machine: machine(),
      method: `tokenload profile --request-rate R --arrival-pattern P --benchmark-duration ${seconds}${warmupSeconds > 0 ? ` --warmup-duration ${warmupSeconds}` : ''} --streaming, synthetic ISL 100 / OSL ${osl} (ignore_eos), simulator in fixed mode (${describeTiming(timing)}) in a child process, timing precision ${precision}; achieved rate = (issued − 1) / (last intended send − first); lag = schedule_lag (request on the wire − intended send time); client CPU (process.cpuUsage, all threads) per request over the whole run (start-up, client warm-up and warmup phase included; divided by the requests of both phases) and per request and per content chunk of the profiling phase alone (from its start to the end of the run); chunks per read from the records' inter-chunk gaps (0 = same read)`,
      rows,
    },
    null,
    2,
  ),
);
