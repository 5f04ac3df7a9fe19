/**
 * The run's first seconds beside the rest. A load generator that starts cold (code not yet
 * compiled, connections not yet open, a server still accepting them) sends its first requests late
 * and sees their first tokens late; averaged over a long run, that start-up effect disappears from
 * the percentiles. This section keeps it visible: how late requests reached the wire, and TTFT, for
 * requests scheduled (or, without a schedule, begun) in the first {@link START_UP_WINDOW_S} s of
 * the profiling phase, and for all later ones.
 */
import type { LineRecord } from '../record/types.js';
import { type TailStats, tailStats } from './stats.js';

/** Length of the start-up window, s. */
export const START_UP_WINDOW_S = 2;

/** The metrics compared, by tag (all ms); request latency stands for TTFT in a run that does not stream. */
const TAGS = [
  'schedule_lag',
  'client_lag',
  'connection_wait',
  'time_to_first_token',
  'request_latency',
] as const;

/**
 * A first wave this many times slower (p50) than the requests after the window, and by at least
 * {@link SLOW_FIRST_WAVE_MIN_MS}, gets a note when no server warm-up ran.
 */
export const SLOW_FIRST_WAVE_FACTOR = 3;
/** …and at least this much slower, ms (a loopback server's first milliseconds are not a cold engine). */
export const SLOW_FIRST_WAVE_MIN_MS = 250;

/** Percentiles of one metric in one part of the run, ms. */
export type StartUpStats = TailStats;

/** One part of the run: its request count and, per metric with values, its percentiles (`<tag>_ms`). */
export type StartUpPart = { requests: number } & Partial<Record<`${(typeof TAGS)[number]}_ms`, StartUpStats>>;

/**
 * The first wave: the successful requests of the window that began before the first answer (first
 * token, or whole response without streaming) reached the client; what a cold server met first.
 */
export type FirstWave = { requests: number } & Partial<
  Record<'time_to_first_token_ms' | 'request_latency_ms', StartUpStats>
>;

/** `start_up` section of the summary. */
export interface StartUpSection {
  window_s: number;
  first: StartUpPart;
  /** Null when every request fell in the window (a run shorter than it). */
  rest: StartUpPart | null;
  /** Absent when no request of the window succeeded (and in summaries written before it). */
  first_wave?: FirstWave;
}

/** What the first wave needs of a request of the window: its start, its answer and its times. */
interface WaveEntry {
  startNs: number;
  answerNs: number;
  ttftMs: number | undefined;
  latencyMs: number;
}

/** Collects the values of the compared metrics, split at the end of the start-up window. */
export class StartUpSplit {
  private readonly parts = [new PartValues(), new PartValues()] as const;
  /** The window's successful requests (the first wave is found among them once the run ends). */
  private readonly window: WaveEntry[] = [];

  /** @param fromNs monotonic ns the phase's load began. */
  constructor(private readonly fromNs: number) {}

  /** Adds one record to its part (by scheduled time, else start time). */
  add(record: LineRecord): void {
    const at = record.raw.scheduledNs ?? record.raw.startNs;
    const inWindow = at - this.fromNs < START_UP_WINDOW_S * 1e9;
    (inWindow ? this.parts[0] : this.parts[1]).add(record);
    if (inWindow) this.keepForWave(record);
  }

  private keepForWave(record: LineRecord): void {
    const latencyMs = record.metrics.request_latency;
    if (!record.valid || typeof latencyMs !== 'number') return;
    const ttft = record.metrics.time_to_first_token;
    const ttftMs = typeof ttft === 'number' ? ttft : undefined;
    const startNs = record.raw.startNs;
    this.window.push({ startNs, answerNs: startNs + (ttftMs ?? latencyMs) * 1e6, ttftMs, latencyMs });
  }

  /** The section; null when no request fell in the window. */
  build(): StartUpSection | null {
    const [first, rest] = this.parts;
    if (first.requests === 0) return null;
    const wave = firstWave(this.window);
    return {
      window_s: START_UP_WINDOW_S,
      first: first.build(),
      rest: rest.requests === 0 ? null : rest.build(),
      ...(wave === null ? {} : { first_wave: wave }),
    };
  }
}

/** The first wave among the window's successful requests; null when there are none. */
function firstWave(window: readonly WaveEntry[]): FirstWave | null {
  if (window.length === 0) return null;
  const firstAnswerNs = window.reduce((min, e) => Math.min(min, e.answerNs), Number.POSITIVE_INFINITY);
  const wave = window.filter((e) => e.startNs < firstAnswerNs);
  const ttfts = wave.map((e) => e.ttftMs).filter((v) => v !== undefined);
  return {
    requests: wave.length,
    ...(ttfts.length > 0 ? { time_to_first_token_ms: tailStats(ttfts) } : {}),
    request_latency_ms: tailStats(wave.map((e) => e.latencyMs)),
  };
}

class PartValues {
  requests = 0;
  private readonly values = TAGS.map(() => [] as number[]);

  add(record: LineRecord): void {
    this.requests++;
    for (let i = 0; i < TAGS.length; i++) {
      const value = record.metrics[TAGS[i] as string];
      if (typeof value === 'number') this.values[i]?.push(value);
    }
  }

  build(): StartUpPart {
    const part: StartUpPart = { requests: this.requests };
    for (let i = 0; i < TAGS.length; i++) {
      const list = this.values[i] as number[];
      if (list.length > 0) part[`${TAGS[i] as (typeof TAGS)[number]}_ms`] = tailStats(list);
    }
    return part;
  }
}

function requestsText(n: number): string {
  return `${n} ${n === 1 ? 'request' : 'requests'}`;
}

/** TTFT when the part has it, else request latency (a run that does not stream), with its name. */
function answerTime(
  part: Partial<Record<'time_to_first_token_ms' | 'request_latency_ms', StartUpStats>>,
): { name: string; stats: StartUpStats } | null {
  if (part.time_to_first_token_ms !== undefined) return { name: 'TTFT', stats: part.time_to_first_token_ms };
  if (part.request_latency_ms !== undefined) return { name: 'latency', stats: part.request_latency_ms };
  return null;
}

/**
 * The console line comparing the two parts and naming the first wave, e.g. `Start-up: first 2 s:
 * 82 requests, … TTFT p50 21.8 / p99 77.1 ms; after: …; first wave: 4 requests before the first
 * answer, TTFT p50 80.1 / max 85.6 ms`.
 */
export function startUpLine(section: StartUpSection): string {
  const describe = (part: StartUpPart): string => {
    const lag = part.schedule_lag_ms;
    const time = answerTime(part);
    const bits = [requestsText(part.requests)];
    if (lag !== undefined) bits.push(`schedule lag p50 ${lag.p50} / p99 ${lag.p99} ms`);
    if (time !== null) bits.push(`${time.name} p50 ${time.stats.p50} / p99 ${time.stats.p99} ms`);
    return bits.join(', ');
  };
  const rest = section.rest === null ? 'none (the run was shorter)' : describe(section.rest);
  const wave = section.first_wave === undefined ? null : answerTime(section.first_wave);
  const waveText =
    section.first_wave === undefined || wave === null
      ? ''
      : `; first wave: ${requestsText(section.first_wave.requests)} before the first answer, ${wave.name} p50 ${wave.stats.p50} / max ${wave.stats.max} ms`;
  return `Start-up: first ${section.window_s} s: ${describe(section.first)}; after: ${rest}${waveText}`;
}

/**
 * The note of a first wave much slower than the requests after the window (p50 at least
 * {@link SLOW_FIRST_WAVE_FACTOR} times theirs and {@link SLOW_FIRST_WAVE_MIN_MS} more) in a run
 * without a server warm-up; null otherwise, or when the run was too short to compare.
 * @param warmedUp whether a warm-up phase (`--warmup-request-count`, …) ran against the server.
 */
export function slowFirstWaveNote(section: StartUpSection, warmedUp: boolean): string | null {
  const wave = section.first_wave;
  if (warmedUp || wave === undefined || section.rest === null) return null;
  const streamed = wave.time_to_first_token_ms !== undefined;
  const first = streamed ? wave.time_to_first_token_ms : wave.request_latency_ms;
  const after = streamed ? section.rest.time_to_first_token_ms : section.rest.request_latency_ms;
  if (first === undefined || after === undefined) return null;
  const slower =
    first.p50 >= SLOW_FIRST_WAVE_FACTOR * after.p50 && first.p50 - after.p50 >= SLOW_FIRST_WAVE_MIN_MS;
  if (!slower) return null;
  const name = streamed ? 'TTFT' : 'request latency';
  const times = after.p50 > 0 ? `${(first.p50 / after.p50).toFixed(1)} times` : 'far above';
  return (
    `the first wave (${requestsText(wave.requests)} sent before the first answer) had ${name} p50 ${first.p50} ms, ` +
    `${times} the p50 after the first ${section.window_s} s (${after.p50} ms), and no warm-up ran against the server: ` +
    `a cold server's first requests (or an opening burst of ${wave.requests} at once) are in the measurement; ` +
    '--warmup-request-count N sends N requests before it, outside the metrics'
  );
}
