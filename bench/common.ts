/**
 * Shared helpers for benchmarks: machine description, peak RSS from /proc, JSON output.
 * Benchmarks print one JSON object to stdout with the machine, the Node version and the method.
 */
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

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

/** What {@link measuredRun} observed around one `runProfile` call. */
export interface MeasuredRun {
  outcome: import('../src/run/finish.js').RunOutcome;
  /** Client event-loop delay percentiles, ms. */
  loopDelayMs: { p50: number | null; p99: number | null };
  /** Client process CPU (user + system) during the run, ms. */
  clientCpuMs: number;
  /** Simulator child CPU during the run, ms. */
  simulatorCpuMs: number;
}

/**
 * Runs one profile quietly in this process against the simulator child `simPid`, sampling this
 * process's event-loop delay (1 ms resolution) and both processes' CPU.
 */
export async function measuredRun(
  config: import('../src/run/config.js').ProfileConfig,
  simPid: number,
): Promise<MeasuredRun> {
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const { runProfile } = await import('../src/run/profile.js');
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const simCpu0 = procCpuSeconds(simPid);
  const outcome = await runProfile(config, {
    log: { info: () => undefined, warn: () => undefined },
    stopSignal: new AbortController().signal,
  });
  loop.disable();
  const cpu = process.cpuUsage(cpu0);
  return {
    outcome,
    loopDelayMs: { p50: r3(loop.percentile(50) / 1e6), p99: r3(loop.percentile(99) / 1e6) },
    clientCpuMs: (cpu.user + cpu.system) / 1000,
    simulatorCpuMs: (procCpuSeconds(simPid) - simCpu0) * 1000,
  };
}
