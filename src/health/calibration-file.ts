/**
 * The calibration file `tokenload calibrate` writes (by default {@link defaultCalibrationPath}) and
 * `tokenload profile` reads before each `--request-rate` run, to warn when the rate asked for is above
 * what this machine sustained, and with `--workers auto`, to size the client's threads
 * (run/workers-auto.ts). Only the default path is read.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { describeIssue, valueAt } from '../util/option-meta.js';

/** One calibration step: a short profile run at `target` (req/s or concurrent streams). */
export interface CalibrationStep {
  target: number;
  achieved: number;
  lagP99Ms: number | null;
  loopDelayP99Ms: number;
  /** The step's own start-up floor (`client_health.wake_floor_ms.p99`), ms. */
  wakeFloorP99Ms: number;
  /** The event-loop delay p99 of the same start-up probe (`client_health.idle_loop_delay_ms.p99`), ms. */
  idleLoopDelayP99Ms: number;
  /** What the step was judged against: send lag p99 (rate) or loop delay p99 (streams) at most this, ms. */
  limitMs: number;
  eventsPerS: number;
  errors: number;
  pass: boolean;
}

/**
 * The calibration file, schema 2 (schema 1 judged every step against a fixed 2 ms, which a machine
 * whose own wake-up floor is above it never passes). Rates in req/s, events in SSE events/s. A null
 * ceiling means no step passed: the machine's ceiling is below the lowest step tried.
 */
export interface Calibration {
  schemaVersion: 2;
  measuredAt: string;
  node: string;
  cpus: number;
  workers: number;
  /** Highest rate step with send lag p99 ≤ its wake floor p99 + 2 ms; null: below `rateSteps[0]`. */
  maxRequestRatePerS: number | null;
  /** Most streams with loop delay p99 ≤ the idle loop's p99 + 10 ms; null: below `streamSteps[0]`. */
  concurrentStreams: number | null;
  /** SSE events/s parsed at `concurrentStreams`; null with it. */
  sseEventsPerS: number | null;
  rateSteps: CalibrationStep[];
  streamSteps: CalibrationStep[];
}

/** What {@link rateWarning} and `--workers auto` (run/workers-auto.ts) read of a file of any schema. */
const StoredCalibration = z.object({
  schemaVersion: z.number(),
  measuredAt: z.string(),
  maxRequestRatePerS: z.number().nullable(),
  rateSteps: z.array(z.object({ target: z.number() })),
  /** `--workers` the steps ran with; absent in a file that does not say. */
  workers: z.number().int().min(1).optional(),
  concurrentStreams: z.number().nullable().optional(),
  streamSteps: z.array(z.object({ target: z.number() })).optional(),
});

/** A calibration file as read back: the fields the rate warning and `--workers auto` need, of any schema version. */
export type StoredCalibration = z.infer<typeof StoredCalibration>;

/** Default calibration file path: `~/.cache/tokenload/calibration.json`. */
export function defaultCalibrationPath(): string {
  return join(homedir(), '.cache', 'tokenload', 'calibration.json');
}

/**
 * Reads a calibration file; null when there is none, or when it cannot be used: unreadable, not
 * JSON, or not a calibration. The file is optional (profile reads it on its own, to warn), so such a
 * file is not an error: `warn` is told which file, what is wrong with it and that the check is
 * skipped, so a corrupt file is never ignored silently.
 */
export async function readCalibration(
  path = defaultCalibrationPath(),
  warn: (message: string) => void = () => undefined,
): Promise<StoredCalibration | null> {
  const skipped =
    'the --request-rate check against this machine’s calibration is skipped; rerun tokenload calibrate to rewrite it, or remove the file';
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      warn(`${path}: cannot be read (${(err as Error).message}); ${skipped}`);
    return null;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    warn(`${path}: not JSON (${(err as Error).message}); ${skipped}`);
    return null;
  }
  const parsed = StoredCalibration.safeParse(data);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const what =
    issue === undefined
      ? 'not a calibration'
      : `not a calibration file of tokenload calibrate: ${issue.path.length === 0 ? '' : `field ${issue.path.join('.')}: `}${describeIssue(issue, valueAt(data, issue.path))}`;
  warn(`${path}: ${what}; ${skipped}`);
  return null;
}

/**
 * A warning before a `--request-rate` run when calibration says this machine cannot send that rate
 * on time; null when it can, or when there is no calibration. A ceiling below the lowest step is
 * never read as a rate of 0: it warns only from that step up. A schema-1 file (judged against a fixed
 * 2 ms) is not trusted: a rate above its ceiling asks for a new calibration instead.
 */
export function rateWarning(
  calibration: StoredCalibration | null,
  requestRatePerS: number,
  path = defaultCalibrationPath(),
): string | null {
  if (calibration === null) return null;
  const source = `tokenload calibrate, ${calibration.measuredAt}, ${path}`;
  const max = calibration.maxRequestRatePerS;
  if (calibration.schemaVersion < 2) {
    if (max !== null && max > 0 && requestRatePerS <= max) return null;
    return `--request-rate ${requestRatePerS}: the calibration (${source}) judged its steps against a fixed 2 ms instead of this machine's wake-up floor, so its ceiling is not used; rerun tokenload calibrate`;
  }
  if (max === null) {
    const lowest = calibration.rateSteps[0]?.target;
    if (lowest === undefined || requestRatePerS < lowest) return null;
    return `--request-rate ${requestRatePerS}: this machine's rate ceiling is below ${lowest} req/s, the lowest step calibration tried (${source}): even that step missed send lag p99 ≤ wake floor p99 + 2 ms; expect late sends`;
  }
  if (requestRatePerS <= max) return null;
  return `--request-rate ${requestRatePerS} exceeds the ${max} req/s this machine sustained with send lag p99 ≤ its wake floor p99 + 2 ms (${source}); expect a saturated client`;
}
