/**
 * Trace-replay benchmark: replays a trace window against the built-in simulator in a separate
 * process and reports the client's send lag (schedule_lag p50/p99/max), event-loop delay, and the
 * peak RSS of client and simulator.
 *
 *   npm run bench:replay -- --trace examples/traces/mooncake_conversation_trace.jsonl \
 *     --type mooncake_trace --end-offset 600000 --speedup 10
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { DatasetTypeName } from '../src/dataset/registry.js';
import type { StatsSummary } from '../src/metrics/summary.js';
import { type ProfileConfig, profileConfig } from '../src/run/config.js';
import { runProfile } from '../src/run/profile.js';
import { spawnSimulator } from '../src/simulator/spawn.js';
import { arg, machine, peakRssMiB, r3 } from './common.js';

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
await sim.close();
const m = outcome.summary.metrics;
const lag = m.schedule_lag as StatsSummary | undefined;
const ttft = m.time_to_first_token as StatsSummary | undefined;
console.log(
  JSON.stringify(
    {
      benchmark: 'replay',
      machine: machine(),
      method: `tokenload profile on ${trace} (${type}), end offset ${endOffset} ms, speedup ${speedup}x, streaming chat, simulator (${simMode} mode) in a child process; lag = request_start − scheduled send time per request`,
      requests: outcome.recordCount,
      errors: (m.error_request_count as { avg: number } | undefined)?.avg ?? 0,
      wallSeconds: r3(wallS),
      sendLagMs: { p50: r3(lag?.p50), p99: r3(lag?.p99), max: r3(lag?.max), avg: r3(lag?.avg) },
      ttftMs: { p50: r3(ttft?.p50), p99: r3(ttft?.p99) },
      clientEventLoopDelayMs: {
        p50: r3(loop.percentile(50) / 1e6),
        p99: r3(loop.percentile(99) / 1e6),
        max: r3(loop.max / 1e6),
      },
      clientCpuSeconds: r3((cpu.user + cpu.system) / 1e6),
      peakRssMiB: { client: peakRssMiB(), simulator: simPeak },
      artifactDir: dir,
    },
    null,
    2,
  ),
);
