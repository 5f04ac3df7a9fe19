/**
 * Trace-replay benchmark: replays a trace window against the built-in simulator in a separate
 * process and reports the client's send lag (schedule_lag p50/p99/max: on the wire − scheduled)
 * with its two parts (client_lag: request start − scheduled; connection_wait: on the wire − start),
 * how many requests waited for a new connection, event-loop delay, and the peak RSS of client and
 * simulator.
 *
 *   npm run bench:replay -- --trace examples/traces/mooncake_conversation_trace.jsonl \
 *     --type mooncake_trace --end-offset 600000 --speedup 10
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ProfileConfig } from '../src/config/resolve.js';
import { profileConfig } from '../src/config/schema.js';
import type { DatasetTypeName } from '../src/dataset/registry.js';
import { SUMMARY_JSON_FILE_NAME } from '../src/export/index.js';
import type { StatsSummary } from '../src/metrics/summary.js';
import { runProfile } from '../src/run/profile.js';
import { spawnSimulator } from '../src/simulator/spawn.js';
import { arg, machine, peakRssMiB, procCpuSeconds, r3 } from './common.js';

const trace = arg('trace', 'examples/traces/mooncake_conversation_trace.jsonl');
const type = arg('type', 'mooncake_trace') as DatasetTypeName;
const endOffset = arg('end-offset', '600000');
const speedup = Number(arg('speedup', '10'));
const simMode = arg('sim-mode', 'engine');

const sim = await spawnSimulator({ mode: simMode as 'engine' | 'fixed' });
const dir = mkdtempSync(join(tmpdir(), 'tokenload-bench-'));
const config: ProfileConfig = profileConfig({
  models: ['Qwen/Qwen3-0.6B'],
  randomSeed: 1,
  url: sim.url,
  streaming: true,
  inputFile: trace,
  customDatasetType: type,
  fixedSchedule: true,
  ...(endOffset === 'none' ? {} : { fixedScheduleEndOffsetMs: Number(endOffset) }),
  synthesisSpeedupRatio: speedup,
  requestTimeoutSeconds: 3600,
  artifactDir: dir,
  timingPrecision: arg('precision', 'timer') as 'timer' | 'spin',
  commandLine: 'bench/replay.ts',
});
const loadAtStart = loadavg()[0] as number;
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const outcome = await runProfile(config, {
  log: { info: () => undefined, warn: () => undefined },
  stopSignal: new AbortController().signal,
});
const wallS = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
loop.disable();
const simPeak = peakRssMiB(sim.pid);
const simCpuS = procCpuSeconds(sim.pid);
await sim.close();
const m = outcome.summary.metrics;
const stats = (tag: string): StatsSummary | undefined => (m as Record<string, unknown>)[tag] as StatsSummary;
const lagOf = (tag: string) => {
  const v = stats(tag);
  return { p50: r3(v?.p50), p99: r3(v?.p99), max: r3(v?.max), avg: r3(v?.avg) };
};
const ttft = stats('time_to_first_token');
const written = JSON.parse(readFileSync(join(dir, SUMMARY_JSON_FILE_NAME), 'utf8')) as {
  connections?: Record<string, unknown>;
};
console.log(
  JSON.stringify(
    {
      benchmark: 'replay',
      machine: machine(),
      method: `tokenload profile on ${trace} (${type}), end offset ${endOffset} ms, speedup ${speedup}x, streaming chat, simulator (${simMode} mode) in a child process; send lag = request_sent − scheduled (on the wire), client lag = request_start − scheduled, connection wait = request_sent − request_start`,
      requests: outcome.recordCount,
      errors: (m.error_request_count as { avg: number } | undefined)?.avg ?? 0,
      wallSeconds: r3(wallS),
      sendLagMs: lagOf('schedule_lag'),
      clientLagMs: lagOf('client_lag'),
      connectionWaitMs: lagOf('connection_wait'),
      connections: written.connections ?? null,
      ttftMs: { p50: r3(ttft?.p50), p99: r3(ttft?.p99) },
      clientEventLoopDelayMs: {
        p50: r3(loop.percentile(50) / 1e6),
        p99: r3(loop.percentile(99) / 1e6),
        max: r3(loop.max / 1e6),
      },
      clientCpuSeconds: r3((cpu.user + cpu.system) / 1e6),
      simulatorCpuSeconds: r3(simCpuS),
      loadAverage1m: { start: r3(loadAtStart), end: r3(loadavg()[0]) },
      peakRssMiB: { client: peakRssMiB(), simulator: simPeak },
      artifactDir: dir,
    },
    null,
    2,
  ),
);
