/**
 * Output, simulator and client options: `--help`'s "Output:" group.
 * Each field carries its AIPerf flag, unit, default and help text ({@link option}); field names
 * follow the flags with units in the names.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { SteadyStateOption } from '../metrics/analysis/steady-state.js';
import { SimulatorOptionsSchema } from '../simulator/options.js';
import { option, optionFields } from '../util/option-meta.js';
import { camel, camelKeys, collectSimulatorOption } from '../util/option-values.js';
import { looksNumeric, plainNumber, plainNumberProblem } from '../util/plain-number.js';
import { int, positive } from './field-kinds.js';
import { serverMetricsFields } from './fields-server.js';

const SIMULATOR_FIELDS = optionFields(SimulatorOptionsSchema);

/** `--steady-state`'s text, kept as written (a config re-parses its own output); read by {@link parseSteadyState}. */
const steadyStateSchema = z.string().superRefine((text, ctx) => {
  const problem = steadyStateProblem(text);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});

/** Why `text` is not a `--steady-state` value; null when it is. */
function steadyStateProblem(text: string): string | null {
  return parseSteadyState(text) === null
    ? `expected auto, off or START_PCT:END_PCT (plain decimals, 0 <= START < END <= 100, no spaces; e.g. 10:90), got '${text}'`
    : null;
}

/**
 * `--steady-state` as an option: `auto`, `off`, or `START:END` plain decimal percentages with
 * 0 ≤ START < END ≤ 100, no spaces; null for any other text.
 */
export function parseSteadyState(text: string): SteadyStateOption | null {
  if (text === 'auto' || text === 'off') return { kind: text };
  // Plain decimal percentages, no spaces (as every other value: docs/running.md).
  const m = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(text);
  const startPct = Number(m?.[1]);
  const endPct = Number(m?.[2]);
  return m !== null && startPct >= 0 && startPct < endPct && endPct <= 100
    ? { kind: 'range', startPct, endPct }
    : null;
}

/**
 * Accumulates `--simulator-option name=value`: a number parameter's value must be plain decimal,
 * an integer one's digits only, as its own `tokenload simulate` flag's (util/plain-number.ts).
 * @throws {ConfigError} for text that is not `name=value`, or such a number.
 */
function simulatorOption(text: string, previous?: Record<string, unknown>): Record<string, unknown> {
  const next = collectSimulatorOption(text, previous);
  const at = text.indexOf('=');
  const field = SIMULATOR_FIELDS.find((f) => f.path[0] === camel(text.slice(0, at).trim()));
  const raw = text.slice(at + 1).trim();
  if (field?.kind === 'number' && looksNumeric(raw, field.integer))
    throw new ConfigError(`${field.meta.flag}: ${plainNumberProblem(raw, field.integer)}`);
  return next;
}

/**
 * The most client worker threads: each is a Node event loop with its own connection pool (tens of MB);
 * far more threads than cores only share the cores, so this bounds a typo, not a real client.
 */
export const MAX_WORKERS = 256;

const MAX_WORKERS_REASON =
  "worker threads share this machine's cores; more than a few per core only adds memory";
const WORKERS_MIN_REASON = '1 is a single process (the default); auto sizes the threads from the load';
const WORKERS_EXPECTED = `expected a whole number from 1 to ${MAX_WORKERS}, or auto (as many as the load needs)`;

/** Output, simulator and client options. */
export const outputFields = {
  /** `--artifact-dir`: output folder (default `artifacts/<model>-openai-<endpoint>-<stimulus>`). */
  artifactDir: option(z.string().min(1).optional(), {
    flag: 'artifact-dir',
    unit: 'dir',
    help: 'output folder',
    defaultText: 'artifacts/<run name>',
  }),
  /**
   * `--export-level` (AIPerf's; `--profile-export-level` is its other name): `records` (default) writes
   * the summaries and `profile_export.jsonl`; `raw` adds `profile_export_raw.jsonl` (request bodies
   * and response chunks, export/raw-writer.ts); `summary` leaves `profile_export.jsonl` out (removed
   * once report.html is built from it).
   */
  exportLevel: option(z.enum(['summary', 'records', 'raw']).default('records'), {
    flag: 'export-level',
    unit: 'level',
    help: 'summary: the summary files only (no profile_export.jsonl); records: also one line per request; raw: also profile_export_raw.jsonl with each request body and response chunks',
  }),
  /** `--num-profile-runs`: run the profile this many times (`profile_runs/run_0001/`…) and aggregate them. */
  numProfileRuns: option(int(1).max(1000).default(1), {
    flag: 'num-profile-runs',
    unit: 'n',
    help: 'run the same profile n times (profile_runs/run_0001/…) and write aggregate/ with each metric’s mean, std and confidence interval across the runs',
  }),
  /** `--confidence-level`: of the multi-run confidence intervals (Student's t), in (0, 1). */
  confidenceLevel: option(z.number().gt(0).lt(1).default(0.95), {
    flag: 'confidence-level',
    unit: 'p',
    help: 'confidence level of the intervals across --num-profile-runs runs (Student’s t)',
  }),
  /** `--profile-run-cooldown-seconds`: pause between the trials of `--num-profile-runs`, s. */
  profileRunCooldownSeconds: option(z.number().min(0).default(0), {
    flag: 'profile-run-cooldown-seconds',
    unit: 's',
    help: 'pause between one run of --num-profile-runs and the next (a sweep: between trials)',
  }),
  /** `--parameter-sweep-mode`: a sweep with several runs, `repeated` (each trial sweeps every value) or `independent` (every trial of a value, then the next). */
  parameterSweepMode: option(z.enum(['repeated', 'independent']).default('repeated'), {
    flag: 'parameter-sweep-mode',
    unit: 'mode',
    help: 'with a sweep and --num-profile-runs: repeated runs the whole sweep once per trial (profile_runs/trial_NNNN/<value>/); independent runs every trial of a value before the next (<value>/profile_runs/trial_NNNN/)',
  }),
  /** `--parameter-sweep-cooldown-seconds`: pause between one sweep value and the next within a trial, s. */
  parameterSweepCooldownSeconds: option(z.number().min(0).default(0), {
    flag: 'parameter-sweep-cooldown-seconds',
    unit: 's',
    help: 'pause between one sweep value and the next (--profile-run-cooldown-seconds: between trials)',
  }),
  /** `--parameter-sweep-same-seed`: every sweep value uses the base seed (else value i uses seed + i). */
  parameterSweepSameSeed: option(z.boolean().default(false), {
    flag: 'parameter-sweep-same-seed',
    help: 'every sweep value uses the same seed (--random-seed); without it value i uses that seed + i',
  }),
  /** `--set-consistent-seed`: every run of a multi-run uses one seed (`--random-seed`, else 42). */
  setConsistentSeed: option(z.boolean().default(true), {
    flag: 'set-consistent-seed',
    help: 'with --num-profile-runs, every run uses the same seed (--random-seed, else 42) so they send the same workload; --no-set-consistent-seed draws one per run',
  }),
  /** `--profile-run-disable-warmup-after-first`: only the first run of a multi-run or sweep warms up. */
  profileRunDisableWarmupAfterFirst: option(z.boolean().default(true), {
    flag: 'profile-run-disable-warmup-after-first',
    help: 'only the first run warms up (--warmup-request-count / --warmup-duration); --no-profile-run-disable-warmup-after-first warms up before each',
  }),
  /**
   * `--slice-duration`, s: also summarize the profiling records in consecutive windows this long,
   * from the earliest request start, each record in the window its request started in (AIPerf
   * "Time Slicing"); writes `profile_export_aiperf_timeslices.json` and `.csv`. Unset: no slices.
   */
  sliceDurationSeconds: option(positive.optional(), {
    flag: 'slice-duration',
    unit: 's',
    help: 'also summarize the run in consecutive windows this long (by request start; writes profile_export_aiperf_timeslices.json/.csv)',
  }),
  /**
   * `--steady-state`: how the summary's `steady_state` window is found: `auto` (detected:
   * metrics/analysis/steady-state.ts), `off` (no section), or `START_PCT:END_PCT` of the run's span.
   */
  steadyState: option(steadyStateSchema.default('auto'), {
    flag: 'steady-state',
    unit: 'auto|off|START_PCT:END_PCT',
    help: 'the steady-state window reported beside the whole run: auto (detected), off, or a share of the run in percent, e.g. 10:90',
  }),
  /** `--simulator`: start the built-in simulator in a child process and target it instead of `--url`. */
  simulator: option(z.boolean().default(false), {
    flag: 'simulator',
    help: 'start the built-in simulator and profile it instead of --url',
  }),
  /** `--simulator-option name=value`: the built-in simulator's parameters (its option names). */
  simulatorOptions: option(z.record(z.string(), z.unknown()).transform(camelKeys).default({}), {
    flag: 'simulator-option',
    unit: 'name=value',
    help: 'built-in simulator parameter (see `tokenload simulate --help`, camelCase or kebab-case); repeatable',
    parse: (v, prev) => simulatorOption(v, prev as Record<string, unknown> | undefined),
    repeatable: true,
  }),
  /** `--timing-precision`: `timer` (a helper thread wakes the loop early) or `spin` (polls). */
  timingPrecision: option(z.enum(['timer', 'spin']).default('timer'), {
    flag: 'timing-precision',
    unit: 'mode',
    help: 'timer: a helper thread wakes the loop 0.2 ms early, the last 0.2 ms is polled; spin: poll the last 1.5 ms before every send (costs a busy core)',
  }),
  /** `--client-warmup-ms`: the longest the client warm-up against an in-process simulator may take, ms; 0 = off. */
  clientWarmupMs: option(int(0).default(5000), {
    flag: 'client-warmup-ms',
    unit: 'ms',
    help: 'before the run, exercise this client against an in-process simulator until its CPU per request stops falling, at most this long, so the first requests are not sent and read by cold code; nothing reaches --url (0 = off)',
  }),
  /** `--prewarm-connections`: connections to the target opened before the first request; auto when absent. */
  prewarmConnections: option(
    z.union([int(0), z.literal('auto')], { error: 'expected a whole number >= 0 or auto' }).optional(),
    {
      flag: 'prewarm-connections',
      unit: 'n|auto',
      parse: (text) => (text === 'auto' ? 'auto' : (plainNumber(text, true) ?? text)),
      help: 'open this many keep-alive connections to --url before the first measured request, so the first seconds do not pay a handshake per request (no HTTP request is sent; 0 = off)',
      defaultText:
        "auto: --concurrency, or --request-rate × 1 s, or a fixed schedule's busiest second (64 for a streamed trace); at most 256",
    },
  ),
  /**
   * `--workers`: client worker threads, each with its own connection pool; 1 = single-process;
   * `auto` = chosen before the run from the cores and the load (run/workers-auto.ts).
   */
  workers: option(
    z
      .union(
        [
          z
            .number()
            .int({ error: WORKERS_EXPECTED })
            .min(1, { error: WORKERS_MIN_REASON })
            .max(MAX_WORKERS, { error: MAX_WORKERS_REASON }),
          z.literal('auto'),
        ],
        { error: WORKERS_EXPECTED },
      )
      .optional(),
    {
      flag: 'workers',
      unit: 'n|auto',
      parse: (text) => (text === 'auto' ? 'auto' : (plainNumber(text, true) ?? text)),
      help: "client worker threads, each with its own connection pool (at most 256); auto: as many as the load needs by this machine's calibration (or 800 req/s, 1,000 streams per thread), at most the cores − 1, stated in the console and the summary's client_workers",
      defaultText: '1 (single-process)',
    },
  ),
  /** `--ui`: progress output; `dashboard` is the live bar, as `simple`. */
  ui: option(z.enum(['none', 'simple', 'dashboard']).default('simple'), {
    flag: 'ui',
    unit: 'mode',
    help: 'progress output (dashboard = the live bar, as simple)',
  }),
  ...serverMetricsFields,
  /** The command line as typed, for the console footer (library callers: a placeholder). */
  commandLine: option(z.string().default('(library call)'), {
    flag: 'command-line',
    help: 'the command line as typed',
    internal: true,
  }),
};
