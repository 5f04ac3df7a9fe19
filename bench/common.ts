/**
 * Shared helpers for benchmarks: machine description, peak RSS from /proc, JSON output.
 * Benchmarks print one JSON object to stdout with the machine, the Node version and the method.
 */
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { type PerfRecording, startPerf } from './perf-breakdown.js';

/** Peak resident set size (VmHWM) of a process in MiB, from /proc; null where unavailable. */
export function peakRssMiB(pid: number | 'self' = 'self'): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Machine and runtime facts printed with every benchmark. */
export function machine(): Record<string, unknown> {
  const cpu = cpus();
  return {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? 'unknown',
    memGiB: Math.round(totalmem() / 2 ** 30),
  };
}

/** Reads `--name value` from argv, with a default. */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? (process.argv[i + 1] as string) : fallback;
}

/** True when the bare flag `--name` is on the command line. */
export function flag(name: string): boolean {
  return process.argv.includes(`--${name}`);
}

/**
 * How the simulator (or stub) of a server-like benchmark times its stream: real chunk timing by
 * default (first token after `--ttft-ms`, then one token every `--itl-ms`, each in its own socket
 * write, so the client reads each chunk separately), or with `--one-write` the old mode where every
 * token is due at once and the whole response leaves in one write (TTFT 0, ITL 0).
 */
export interface StreamTiming {
  ttftMs: number;
  itlMs: number;
  oneWrite: boolean;
}

/** The {@link StreamTiming} of this command line; defaults TTFT 20 ms, ITL 5 ms. */
export function streamTiming(
  defaults: { ttftMs: number; itlMs: number } = { ttftMs: 20, itlMs: 5 },
): StreamTiming {
  if (flag('one-write')) return { ttftMs: 0, itlMs: 0, oneWrite: true };
  const ttftMs = Number(arg('ttft-ms', String(defaults.ttftMs)));
  const itlMs = Number(arg('itl-ms', String(defaults.itlMs)));
  return { ttftMs, itlMs, oneWrite: false };
}

/** Describes a {@link StreamTiming} for a benchmark's `method`. */
export function describeTiming(t: StreamTiming): string {
  return t.oneWrite
    ? 'TTFT 0, ITL 0: each response in one write (--one-write)'
    : `TTFT ${t.ttftMs} ms, ITL ${t.itlMs} ms: one write per token`;
}

/**
 * `--perf-window FROM,TO`: seconds after the profiling phase starts to record the client with perf
 * ({@link MeasureOptions.perfWindowMs}, in ms); null without the option. Start the benchmark with
 * `node --perf-basic-prof --import tsx …` so JIT frames have names.
 */
export function perfWindowArg(): [number, number] | null {
  const w = arg('perf-window', '');
  if (w === '') return null;
  const [from = 0, to = 0] = w.split(',').map((x) => Number(x) * 1000);
  return [from, to];
}

/** Rounds to 3 decimals for printing. */
export function r3(x: number | undefined): number | null {
  return x === undefined ? null : Math.round(x * 1000) / 1000;
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat; 0 where unavailable. */
export function procCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** One reading of this process's CPU clock. */
interface CpuSample {
  /** ms since the epoch on the records' clock (`performance.timeOrigin` + `performance.now()`). */
  epochMs: number;
  /** Process CPU (user + system, all threads), µs. */
  cpuUs: number;
}

/** This process's CPU every `intervalMs` until `stop()`; the first reading is taken at once. */
function cpuSampler(intervalMs: number): { samples: CpuSample[]; stop(): void } {
  const samples: CpuSample[] = [];
  const take = (): void => {
    const c = process.cpuUsage();
    samples.push({ epochMs: performance.timeOrigin + performance.now(), cpuUs: c.user + c.system });
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    samples,
    stop: () => {
      clearInterval(timer);
      take();
    },
  };
}

/** Process CPU (µs) at `epochMs`, interpolated between the two samples around it. */
function cpuAt(samples: readonly CpuSample[], epochMs: number): number {
  let i = 1;
  while (i < samples.length - 1 && (samples[i] as CpuSample).epochMs < epochMs) i++;
  const a = samples[i - 1] as CpuSample;
  const b = samples[i] ?? a;
  if (b.epochMs <= a.epochMs) return b.cpuUs;
  const f = Math.min(1, Math.max(0, (epochMs - a.epochMs) / (b.epochMs - a.epochMs)));
  return a.cpuUs + f * (b.cpuUs - a.cpuUs);
}

/** What {@link measuredRun} observed around one `runProfile` call. */
export interface MeasuredRun {
  outcome: import('../src/run/finish.js').RunOutcome;
  /** Client event-loop delay percentiles, ms. */
  loopDelayMs: { p50: number | null; p99: number | null };
  /** Client process CPU (user + system, all threads) during the whole run, ms. */
  clientCpuMs: number;
  /**
   * Client process CPU from the start of the profiling phase to the end of the run, ms: without
   * start-up, the client warm-up (which runs an in-process simulator) and the warmup phase; with
   * the end of the run (summary, exports, HTML report).
   */
  profilingCpuMs: number;
  /** Steady state: the profiling phase from `steadyAfterMs` after its start to its last response. */
  steady: { cpuMs: number; requests: number; chunks: number };
  /** Simulator child CPU during the run, ms. */
  simulatorCpuMs: number;
  /** Content chunks and reads of the profiling phase's records. */
  chunks: ChunkCounts;
  /** Where the CPU of the `perfWindowMs` window went (see perf-breakdown.ts), when one was asked for. */
  perf?: {
    windowMs: readonly [number, number];
    requests: number;
    chunks: number;
    rows: unknown;
    error?: string;
  };
}

/** Options of {@link measuredRun}. */
export interface MeasureOptions {
  /** Start of the steady-state window after the profiling phase starts, ms; default 2,000. */
  steadyAfterMs?: number;
  /**
   * Record the client with `perf` from the first to the second offset after the profiling phase
   * starts (ms) and break its CPU down (perf-breakdown.ts); the records ending in the window count.
   */
  perfWindowMs?: readonly [number, number];
}

/**
 * Runs one profile quietly in this process against the simulator child `simPid`, sampling this
 * process's event-loop delay (1 ms resolution), both processes' CPU, and this process's CPU every
 * 50 ms for the steady-state window (from `steadyAfterMs` after the profiling phase starts to the
 * end of its last response; JIT compilation, first connections and the end-of-run report fall
 * outside it).
 */
export async function measuredRun(
  config: import('../src/config/resolve.js').ProfileConfig,
  simPid: number,
  options: MeasureOptions = {},
): Promise<MeasuredRun> {
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const { runProfile } = await import('../src/run/profile.js');
  const steadyAfterMs = options.steadyAfterMs ?? 2000;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  let profiling0: NodeJS.CpuUsage | null = null;
  let profilingStartMs = 0;
  const simCpu0 = procCpuSeconds(simPid);
  const sampler = cpuSampler(50);
  const perf = perfWindow(options.perfWindowMs);
  const info = (message: string): void => {
    // runProfile logs `profiling: …` right before the profiling phase starts.
    if (!message.startsWith('profiling:')) return;
    profiling0 = process.cpuUsage();
    profilingStartMs = performance.timeOrigin + performance.now();
    perf?.arm();
  };
  const outcome = await runProfile(config, {
    log: { info, warn: () => undefined },
    stopSignal: new AbortController().signal,
  });
  sampler.stop();
  loop.disable();
  const cpu = process.cpuUsage(cpu0);
  const profilingCpu = process.cpuUsage(profiling0 ?? cpu0);
  const records = recordCounts(outcome.artifactDir);
  const fromMs = profilingStartMs + steadyAfterMs;
  const toMs = Math.max(fromMs, ...records.map((r) => r.endEpochMs));
  const steady = inWindow(records, fromMs, toMs);
  return {
    outcome,
    loopDelayMs: { p50: r3(loop.percentile(50) / 1e6), p99: r3(loop.percentile(99) / 1e6) },
    clientCpuMs: (cpu.user + cpu.system) / 1000,
    profilingCpuMs: (profilingCpu.user + profilingCpu.system) / 1000,
    steady: { cpuMs: (cpuAt(sampler.samples, toMs) - cpuAt(sampler.samples, fromMs)) / 1000, ...steady },
    simulatorCpuMs: (procCpuSeconds(simPid) - simCpu0) * 1000,
    chunks: {
      chunks: records.reduce((n, r) => n + r.chunks, 0),
      reads: records.reduce((n, r) => n + r.reads, 0),
    },
    ...(perf === null ? {} : { perf: await perf.result(records, profilingStartMs) }),
  };
}

/** Requests and content chunks of the records that ended in (fromMs, toMs]. */
function inWindow(records: readonly RecordCount[], fromMs: number, toMs: number) {
  const ended = records.filter((r) => r.endEpochMs > fromMs && r.endEpochMs <= toMs);
  return { requests: ended.length, chunks: ended.reduce((n, r) => n + r.chunks, 0) };
}

/** A perf recording over `windowMs` after the profiling phase starts ({@link MeasureOptions}). */
function perfWindow(windowMs: readonly [number, number] | undefined) {
  if (windowMs === undefined) return null;
  let recording: PerfRecording | null = null;
  const timers: NodeJS.Timeout[] = [];
  return {
    arm: (): void => {
      timers.push(
        setTimeout(() => {
          recording = startPerf();
        }, windowMs[0]),
        setTimeout(() => void recording?.end(), windowMs[1]),
      );
    },
    /** Stops recording (if the run ended first) and breaks down the window's CPU. */
    result: async (records: readonly RecordCount[], startMs: number) => {
      for (const t of timers) clearTimeout(t);
      const counts = inWindow(records, startMs + windowMs[0], startMs + windowMs[1]);
      const taken = recording as PerfRecording | null;
      if (taken === null)
        return { windowMs, ...counts, rows: null, error: 'the run ended before the window' };
      await taken.end();
      return { windowMs, ...counts, ...taken.breakdown(counts.requests, counts.chunks) };
    },
  };
}

/** Content chunks the client received, and the reads they arrived in. */
export interface ChunkCounts {
  /** Content events (chunks with text) over all records. */
  chunks: number;
  /**
   * Distinct reads that carried them: a chunk whose arrival stamp equals the previous chunk's
   * (inter-chunk gap exactly 0) came in the same socket read.
   */
  reads: number;
}

/** One record of a run as {@link recordCounts} reads it. */
export interface RecordCount extends ChunkCounts {
  /** `request_end_ns` / 1e6. */
  endEpochMs: number;
}

/**
 * The records of a run from its `profile_export.jsonl`: end time, content chunks (one more than
 * its `inter_chunk_latency` gaps, one when it has a TTFT but no gaps, else none) and the reads
 * that carried them (gaps of exactly 0 are chunks of the same read).
 */
export function recordCounts(artifactDir: string): RecordCount[] {
  let text: string;
  try {
    text = readFileSync(`${artifactDir}/profile_export.jsonl`, 'utf8');
  } catch {
    return [];
  }
  const out: RecordCount[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const { metadata, metrics } = JSON.parse(line) as {
      metadata: { request_end_ns: number };
      metrics: Record<string, { value: unknown }>;
    };
    const gaps = metrics.inter_chunk_latency?.value;
    const endEpochMs = metadata.request_end_ns / 1e6;
    if (Array.isArray(gaps))
      out.push({ endEpochMs, chunks: gaps.length + 1, reads: 1 + gaps.filter((g) => g !== 0).length });
    else {
      const one = metrics.time_to_first_token === undefined ? 0 : 1;
      out.push({ endEpochMs, chunks: one, reads: one });
    }
  }
  return out;
}

/**
 * Client CPU of a {@link MeasuredRun}: per request over the whole run (start-up, client warm-up and
 * a warmup phase included, divided by `allRequests`, the requests of every phase); per request and
 * per content chunk of the profiling phase (to the end of the run) and of its steady state; with
 * the chunks per request and per read.
 */
export function clientCpuFigures(
  run: MeasuredRun,
  profilingRequests: number,
  allRequests = profilingRequests,
): Record<string, number | null> {
  const n = Math.max(1, profilingRequests);
  const c = Math.max(1, run.chunks.chunks);
  const steady = run.steady;
  return {
    chunksPerRequest: r3(run.chunks.chunks / n),
    chunksPerRead: r3(run.chunks.chunks / Math.max(1, run.chunks.reads)),
    clientCpuMsPerRequest: r3(run.clientCpuMs / Math.max(1, allRequests)),
    profilingCpuMsPerRequest: r3(run.profilingCpuMs / n),
    profilingCpuUsPerChunk: r3((run.profilingCpuMs * 1000) / c),
    steadyRequests: steady.requests,
    steadyCpuMsPerRequest: r3(steady.cpuMs / Math.max(1, steady.requests)),
    steadyCpuUsPerChunk: r3((steady.cpuMs * 1000) / Math.max(1, steady.chunks)),
  };
}
