/**
 * `tokenload calibrate`: what can this machine generate? Runs short `profile` runs against the
 * built-in simulator (fixed mode, spawned child) and reports:
 * - the highest request rate (synthetic ISL 100 / OSL 20, streamed, zero server latency) whose
 *   send lag p99 stays within the step's own wake-up floor p99 + 2 ms (`client_health`: the floor the
 *   run measured at start-up), i.e. the schedule is honoured as well as this machine allows;
 * - the most concurrent streams (OSL 50, one token per 10 ms) the client holds with its event-loop
 *   delay p99 within the idle loop's p99 + 10 ms, and the SSE events/s it parsed there.
 * Rates and stream counts double from 50 until a step fails; when the first step fails the ceiling is
 * "below the lowest step", never 0. The simulator shares this machine, so the figures are a floor for
 * a remote server. Results go to {@link defaultCalibrationPath} (or `--output`), which `profile` reads.
 * The first step (of the rate ramp) runs the client warm-up (`--client-warmup-ms`'s default); the
 * later steps, the stream ramp's included, run in this process, warm by then, without it (as a
 * search's later probes do): a stream step's warm-up otherwise ran to its 5 s cap every time, and the
 * stream ramp's first one cost 2–3 s for nothing.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import type { ProfileConfigInput } from '../config/fields.js';
import type { ProfileConfig } from '../config/resolve.js';
import { profileConfig } from '../config/schema.js';
import {
  type Calibration,
  type CalibrationStep,
  defaultCalibrationPath,
} from '../health/calibration-file.js';
import { round3 } from '../health/client-floor.js';
import { HEALTH_LIMITS } from '../health/health-judge.js';
import type { ClientHealth } from '../health/types.js';
import type { StatsSummary } from '../metrics/summary.js';
import { runProfile } from '../run/profile.js';
import { spawnSimulator } from '../simulator/spawn.js';
import { makeDirs } from '../util/make-dir.js';
import { integerAtLeast, numberIn } from './arg-parsers.js';

/** A rate step passes with send lag p99 ≤ its wake floor p99 + this, ms (the health verdict's margin). */
export const RATE_LAG_MARGIN_MS = HEALTH_LIMITS.sendLagMarginMs;
/** A stream step passes with loop delay p99 ≤ its idle loop delay p99 + this, ms. */
export const STREAM_LOOP_MARGIN_MS = 10;

/**
 * Whether a step passed, and its limit, from the step run's `client_health` (which carries the floor
 * that run measured) and its error count: a rate step on send lag p99 (`lagP99Ms`), a stream step on
 * event-loop delay p99.
 */
export function judgeStep(
  kind: 'rate' | 'streams',
  health: Pick<ClientHealth, 'wake_floor_ms' | 'idle_loop_delay_ms' | 'event_loop_delay_ms'>,
  lagP99Ms: number | null,
  errors: number,
): { pass: boolean; limitMs: number } {
  if (kind === 'rate') {
    const limitMs = round3(health.wake_floor_ms.p99 + RATE_LAG_MARGIN_MS);
    return { pass: errors === 0 && lagP99Ms !== null && lagP99Ms <= limitMs, limitMs };
  }
  const limitMs = round3(health.idle_loop_delay_ms.p99 + STREAM_LOOP_MARGIN_MS);
  return { pass: errors === 0 && health.event_loop_delay_ms.p99 <= limitMs, limitMs };
}

async function step(
  base: ProfileConfig,
  load: Partial<ProfileConfig>,
  target: number,
  seconds: number,
): Promise<CalibrationStep> {
  const artifactDir = await mkdtemp(join(tmpdir(), 'tokenload-calibrate-'));
  try {
    const config: ProfileConfig = { ...base, ...load, artifactDir, benchmarkDurationSeconds: seconds };
    const outcome = await runProfile(config, {
      log: { info: () => undefined, warn: () => undefined },
      stopSignal: new AbortController().signal,
    });
    const m = outcome.summary.metrics;
    const summary = JSON.parse(await readFile(join(artifactDir, 'profile_export_aiperf.json'), 'utf8'));
    const health = summary.client_health as ClientHealth;
    const lag = (m.schedule_lag as StatsSummary | undefined)?.p99 ?? null;
    const errors = (m.error_request_count as { avg: number } | undefined)?.avg ?? 0;
    const events = (m.output_token_throughput as { avg: number } | undefined)?.avg ?? 0;
    const kind = load.requestRate === undefined ? 'streams' : 'rate';
    return {
      target,
      achieved: outcome.achievedRatePerS ?? outcome.recordCount / seconds,
      lagP99Ms: lag,
      loopDelayP99Ms: health.event_loop_delay_ms.p99,
      wakeFloorP99Ms: health.wake_floor_ms.p99,
      idleLoopDelayP99Ms: health.idle_loop_delay_ms.p99,
      eventsPerS: events,
      errors,
      ...judgeStep(kind, health, lag, errors),
    };
  } finally {
    await rm(artifactDir, { recursive: true, force: true });
  }
}

/** Doubles `start` until a step fails or `max` is passed; returns every step. */
async function ramp(
  start: number,
  max: number,
  run: (n: number, first: boolean) => Promise<CalibrationStep>,
): Promise<CalibrationStep[]> {
  const steps: CalibrationStep[] = [];
  for (let n = start; n <= max; n *= 2) {
    const s = await run(n, n === start);
    steps.push(s);
    if (!s.pass) break;
  }
  return steps;
}

function best(steps: CalibrationStep[]): CalibrationStep | undefined {
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
 * fixed-mode simulator whose tokens are `itlMs` apart, then closes the simulator. `warmFirst`: its
 * first step runs the client warm-up (the process is cold).
 */
async function rampAgainst(
  itlMs: number,
  common: ProfileConfigInput,
  ramped: { max: number; seconds: number; warmFirst: boolean },
  at: (level: number) => Partial<ProfileConfig>,
): Promise<CalibrationStep[]> {
  const server = await spawnSimulator({ mode: 'fixed', ttftMs: 0, itlMs });
  try {
    const base = profileConfig({ ...common, url: server.url, extraInputs: { ignore_eos: true } });
    // Only the first step warms the client up: the later ones run in this process, warm by then.
    const warm: Partial<ProfileConfig> = { clientWarmupMs: 0 };
    return await ramp(50, ramped.max, (level, first) =>
      step(first && ramped.warmFirst ? base : { ...base, ...warm }, at(level), level, ramped.seconds),
    );
  } finally {
    await server.close();
  }
}

async function calibrate(f: CalibrateFlags): Promise<Calibration> {
  const common = {
    models: ['m'],
    tokenizer: 'builtin',
    randomSeed: 1,
    streaming: true,
    ui: 'none' as const,
    workers: f.workers,
  };
  // Requests/s: responses due at once; concurrent streams: 10 ms between tokens.
  const rateSteps = await rampAgainst(
    0,
    common,
    { max: f.maxRate, seconds: f.seconds, warmFirst: true },
    (rate) => ({
      requestRate: rate,
      synthetic: { isl: 100, osl: 20, numDatasetEntries: 100 },
    }),
  );
  const streamSteps = await rampAgainst(
    10,
    common,
    { max: f.maxStreams, seconds: f.seconds, warmFirst: false },
    (streams) => ({
      concurrency: streams,
      synthetic: { isl: 100, osl: 50, numDatasetEntries: 100 },
    }),
  );
  const bestEvents = best(streamSteps)?.eventsPerS;
  return {
    schemaVersion: 2,
    measuredAt: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    workers: f.workers,
    maxRequestRatePerS: best(rateSteps)?.target ?? null,
    concurrentStreams: best(streamSteps)?.target ?? null,
    sseEventsPerS: bestEvents === undefined ? null : Math.round(bestEvents),
    rateSteps,
    streamSteps,
  };
}

/**
 * The printed results: one row per step (with the floor it measured and the limit it was judged
 * against) and the two ceilings; a ceiling no step reached reads "below the lowest step".
 */
export function calibrationTable(c: Calibration): string {
  const widths = [7, 6, 8, 14, 7, 13, 8, 6, 8];
  const line = (cells: string[]) => cells.map((cell, i) => cell.padStart(widths[i] ?? 0)).join('  ');
  const ms = (x: number | null) => (x === null ? '-' : x.toFixed(2));
  const row = (kind: string, s: CalibrationStep) =>
    line([
      kind.padEnd(7),
      String(s.target),
      s.achieved.toFixed(0),
      ms(s.wakeFloorP99Ms),
      ms(s.lagP99Ms),
      ms(s.idleLoopDelayP99Ms),
      ms(s.loopDelayP99Ms),
      ms(s.limitMs),
      s.eventsPerS.toFixed(0),
      s.pass ? 'pass' : 'FAIL',
    ]);
  const ceiling = (value: number | null, steps: CalibrationStep[], unit: string) =>
    value !== null ? `${value}${unit}` : `below the lowest step (${steps[0]?.target ?? '-'}${unit})`;
  const streams = ceiling(c.concurrentStreams, c.streamSteps, '');
  const head = [
    'step   ',
    'target',
    'achieved',
    'wake floor p99',
    'lag p99',
    'idle loop p99',
    'loop p99',
    'limit',
  ];
  return [
    `${line([...head, 'events/s', 'result'])}   (times in ms)`,
    ...c.rateSteps.map((s) => row('rate', s)),
    ...c.streamSteps.map((s) => row('streams', s)),
    '',
    `Max request rate (send lag p99 ≤ wake floor p99 + ${RATE_LAG_MARGIN_MS} ms): ${ceiling(c.maxRequestRatePerS, c.rateSteps, ' req/s')}`,
    `Concurrent streams (loop delay p99 ≤ idle loop delay p99 + ${STREAM_LOOP_MARGIN_MS} ms): ${c.sseEventsPerS === null ? streams : `${streams}, ${c.sseEventsPerS} SSE events/s`}`,
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
    .option(
      '--output <file>',
      'where to write the results (default ~/.cache/tokenload/calibration.json, the only file profile reads)',
    )
    .action(async (f: CalibrateFlags) => {
      const result = await calibrate(f);
      const path = f.output ?? defaultCalibrationPath();
      await makeDirs(dirname(path));
      await writeFile(path, `${JSON.stringify(result, null, 2)}\n`);
      const used =
        path === defaultCalibrationPath()
          ? 'tokenload profile reads it before every --request-rate run and warns above the max request rate'
          : `tokenload profile reads only ${defaultCalibrationPath()}, not this file`;
      process.stdout.write(`${calibrationTable(result)}\nWritten to ${path} (${used})\n`);
      setExit(0);
    });
}
