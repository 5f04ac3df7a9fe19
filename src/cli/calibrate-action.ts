/**
 * `tokenload calibrate`: what can this machine generate? Runs short `profile` runs against the
 * built-in simulator (fixed mode, spawned child) and reports:
 * - the highest request rate (synthetic ISL 100 / OSL 20, streamed, zero server latency) whose
 *   send lag p99 stays under 2 ms — the schedule is honoured to within 2 ms;
 * - the most concurrent streams (OSL 50, one token per 10 ms) the client holds with its event-loop
 *   delay p99 under 10 ms, and the SSE events/s it parsed there.
 * Rates and stream counts double from 50 until a step fails. The simulator shares this machine, so the
 * figures are a floor for a remote server. Results go to `~/.cache/tokenload/calibration.json`.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import type { StatsSummary } from '../metrics/summary.js';
import { type ProfileConfig, profileConfig } from '../run/config.js';
import type { ClientHealth } from '../run/monitor.js';
import { runProfile } from '../run/profile.js';
import { spawnSimulator } from '../simulator/spawn.js';
import { integerAtLeast, numberIn } from './arg-parsers.js';

/** One calibration step. */
interface Step {
  target: number;
  achieved: number;
  lagP99Ms: number | null;
  loopDelayP99Ms: number;
  eventsPerS: number;
  errors: number;
  pass: boolean;
}

/** The calibration file. Rates in req/s, events in SSE events/s. */
export interface Calibration {
  schemaVersion: 1;
  measuredAt: string;
  node: string;
  cpus: number;
  workers: number;
  maxRequestRatePerS: number;
  concurrentStreams: number;
  sseEventsPerS: number;
  rateSteps: Step[];
  streamSteps: Step[];
}

const LAG_LIMIT_MS = 2;
const LOOP_LIMIT_MS = 10;

/** Default calibration file path. */
export function defaultCalibrationPath(): string {
  return join(homedir(), '.cache', 'tokenload', 'calibration.json');
}

/** Reads a calibration file; null when absent or unreadable (callers then skip the warning). */
export async function readCalibration(path = defaultCalibrationPath()): Promise<Calibration | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Calibration;
  } catch {
    return null;
  }
}

/**
 * A warning when a requested rate exceeds what calibration measured on this machine; null otherwise.
 * For the lead to call before a `--request-rate` run.
 */
export function rateWarning(calibration: Calibration | null, requestRatePerS: number): string | null {
  if (calibration === null || requestRatePerS <= calibration.maxRequestRatePerS) return null;
  return `--request-rate ${requestRatePerS} exceeds the ${calibration.maxRequestRatePerS} req/s this machine sustained with send lag p99 < ${LAG_LIMIT_MS} ms (tokenload calibrate, ${calibration.measuredAt}); expect a saturated client`;
}

async function step(
  base: ProfileConfig,
  load: Partial<ProfileConfig>,
  target: number,
  seconds: number,
): Promise<Step> {
  const artifactDir = await mkdtemp(join(tmpdir(), 'tokenload-calibrate-'));
  try {
    const config: ProfileConfig = { ...base, ...load, artifactDir, benchmarkDurationSeconds: seconds };
    const outcome = await runProfile(config, {
      log: { info: () => undefined, warn: () => undefined },
      stopSignal: new AbortController().signal,
    });
    const m = outcome.summary.metrics;
    const summary = JSON.parse(await readFile(join(artifactDir, 'profile_export_aiperf.json'), 'utf8'));
    const health = summary.client_health as ClientHealth | undefined;
    const lag = (m.schedule_lag as StatsSummary | undefined)?.p99 ?? null;
    const errors = (m.error_request_count as { avg: number } | undefined)?.avg ?? 0;
    const events = (m.output_token_throughput as { avg: number } | undefined)?.avg ?? 0;
    const loop = health?.event_loop_delay_ms.p99 ?? 0;
    const achieved = outcome.achievedRatePerS ?? outcome.recordCount / seconds;
    const pass =
      errors === 0 &&
      (load.requestRate === undefined ? loop < LOOP_LIMIT_MS : lag !== null && lag < LAG_LIMIT_MS);
    return { target, achieved, lagP99Ms: lag, loopDelayP99Ms: loop, eventsPerS: events, errors, pass };
  } finally {
    await rm(artifactDir, { recursive: true, force: true });
  }
}

/** Doubles `start` until a step fails or `max` is passed; returns every step. */
async function ramp(start: number, max: number, run: (n: number) => Promise<Step>): Promise<Step[]> {
  const steps: Step[] = [];
  for (let n = start; n <= max; n *= 2) {
    const s = await run(n);
    steps.push(s);
    if (!s.pass) break;
  }
  return steps;
}

function best(steps: Step[]): Step | undefined {
  return steps.filter((s) => s.pass).at(-1);
}

interface CalibrateFlags {
  seconds: number;
  workers: number;
  maxRate: number;
  maxStreams: number;
  output?: string;
}

/**
 * Ramps a level from 50 to `max` (each step `seconds` long, configured by `at(level)`) against a
 * fixed-mode simulator whose tokens are `itlMs` apart, then closes the simulator.
 */
async function rampAgainst(
  itlMs: number,
  common: Partial<ProfileConfig> & Pick<ProfileConfig, 'models' | 'randomSeed'>,
  max: number,
  seconds: number,
  at: (level: number) => Partial<ProfileConfig>,
): Promise<Step[]> {
  const server = await spawnSimulator({ mode: 'fixed', ttftMs: 0, itlMs });
  try {
    const base = profileConfig({ ...common, url: server.url, extraInputs: { ignore_eos: true } });
    return await ramp(50, max, (level) => step(base, at(level), level, seconds));
  } finally {
    await server.close();
  }
}

async function calibrate(f: CalibrateFlags): Promise<Calibration> {
  const common = { models: ['m'], randomSeed: 1, streaming: true, ui: 'none' as const, workers: f.workers };
  // Requests/s: responses due at once; concurrent streams: 10 ms between tokens.
  const rateSteps = await rampAgainst(0, common, f.maxRate, f.seconds, (rate) => ({
    requestRate: rate,
    synthetic: { isl: 100, osl: 20, numDatasetEntries: 100 },
  }));
  const streamSteps = await rampAgainst(10, common, f.maxStreams, f.seconds, (streams) => ({
    concurrency: streams,
    synthetic: { isl: 100, osl: 50, numDatasetEntries: 100 },
  }));
  return {
    schemaVersion: 1,
    measuredAt: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    workers: f.workers,
    maxRequestRatePerS: best(rateSteps)?.target ?? 0,
    concurrentStreams: best(streamSteps)?.target ?? 0,
    sseEventsPerS: Math.round(best(streamSteps)?.eventsPerS ?? 0),
    rateSteps,
    streamSteps,
  };
}

function table(c: Calibration): string {
  const row = (kind: string, s: Step) =>
    `${kind.padEnd(8)} ${String(s.target).padStart(6)} ${s.achieved.toFixed(0).padStart(9)} ${String(s.lagP99Ms?.toFixed(2) ?? '-').padStart(10)} ${s.loopDelayP99Ms.toFixed(2).padStart(11)} ${s.eventsPerS.toFixed(0).padStart(9)}  ${s.pass ? 'pass' : 'FAIL'}`;
  return [
    'step     target  achieved  lag p99 ms  loop p99 ms  events/s  result',
    ...c.rateSteps.map((s) => row('rate', s)),
    ...c.streamSteps.map((s) => row('streams', s)),
    '',
    `Max request rate (send lag p99 < ${LAG_LIMIT_MS} ms): ${c.maxRequestRatePerS} req/s`,
    `Concurrent streams (loop delay p99 < ${LOOP_LIMIT_MS} ms): ${c.concurrentStreams}, ${c.sseEventsPerS} SSE events/s`,
  ].join('\n');
}

/** Registers `tokenload calibrate`. */
export function registerCalibrateCommand(program: Command, setExit: (code: number) => void): void {
  program
    .command('calibrate')
    .description(
      'measure the request rate and concurrent streams this machine can generate (built-in simulator)',
    )
    .option('--seconds <s>', 'duration of each step', numberIn(0.5), 3)
    .option('--workers <n>', 'client worker threads, as for profile', integerAtLeast(1), 1)
    .option('--max-rate <r>', 'highest request rate to try', integerAtLeast(100), 12800)
    .option('--max-streams <n>', 'most concurrent streams to try', integerAtLeast(100), 6400)
    .option('--output <file>', 'where to write the results (default ~/.cache/tokenload/calibration.json)')
    .action(async (f: CalibrateFlags) => {
      const result = await calibrate(f);
      const path = f.output ?? defaultCalibrationPath();
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, `${JSON.stringify(result, null, 2)}\n`);
      process.stdout.write(`${table(result)}\nWritten to ${path}\n`);
      setExit(0);
    });
}
