/**
 * Reads a run's artifact directory (`profile_export.jsonl` and, when present,
 * `profile_export_aiperf.json`, `profile_export_aiperf_timeslices.json` and `server_metrics_export.jsonl`) into a {@link RunData}: typed per-request points on a time axis in
 * seconds since the first request started.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadGpuRun } from './gpu-series.js';
import { type ParsedLine, parseRecordLine, toRequestPoint } from './record-line.js';
import { loadServerRun } from './server-series.js';
import { slicesOf } from './summary-analysis.js';
import { parseRunSummary } from './summary-file.js';
import { RequestTimeline } from './timeline.js';
import { type RunData, RunLoadError, type RunSummary, type SlicePoint } from './types.js';
import { ValueSample } from './value-sample.js';

/** File names read from an artifact directory (the defaults `tokenload profile` writes). */
export const RUN_FILES = {
  records: 'profile_export.jsonl',
  summary: 'profile_export_aiperf.json',
  timeslices: 'profile_export_aiperf_timeslices.json',
} as const;

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Most requests a report keeps as {@link RequestPoint}s (about 0.5 KB each on the JS heap): a run of
 * more has an evenly spaced sample of them (every k-th line, k a power of two, between this many
 * and twice it), and its bins and counts come from the {@link RequestTimeline} of every request.
 */
export const REPORT_REQUEST_CAP = 1 << 19;

/** Keeps every `stride`-th line offered, halving what it holds at twice the cap (as value-sample.ts). */
class LineSample {
  readonly kept: ParsedLine[] = [];
  stride = 1;
  private offered = 0;

  constructor(private readonly cap: number) {}

  add(line: ParsedLine): void {
    if (this.offered++ % this.stride !== 0) return;
    this.kept.push(line);
    if (this.kept.length < 2 * this.cap) return;
    let w = 0;
    for (let r = 0; r < this.kept.length; r += 2) this.kept[w++] = this.kept[r] as ParsedLine;
    this.kept.length = w;
    this.stride *= 2;
  }
}

/** What a records file is read into: sampled lines, every request's timeline, a sample of the gaps. */
interface ReadLines {
  lines: ParsedLine[];
  timeline: RequestTimeline;
  t0Ns: bigint;
  icl: ValueSample;
}

/** The lines of a records file (a sample past the cap), their timeline and a sample of their inter-chunk latencies. */
async function readLines(file: string, requestCap: number): Promise<ReadLines> {
  const sample = new LineSample(requestCap);
  const timeline = new RequestTimeline();
  const icl = new ValueSample();
  let t0Ns: bigint | null = null;
  const input = createReadStream(file);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  try {
    for await (const text of lines) {
      n += 1;
      const parsed = parseLine(file, n, text);
      if (parsed === null) continue;
      for (const v of parsed.interChunkLatencyMs ?? []) icl.add(v);
      // Only the sample keeps them: a long run's lines would hold hundreds of numbers each.
      parsed.interChunkLatencyMs = null;
      if (t0Ns === null || parsed.startNs < t0Ns) t0Ns = parsed.startNs;
      timeline.add(parsed);
      sample.add(parsed);
    }
  } finally {
    lines.close();
    input.destroy();
  }
  timeline.setOrigin(t0Ns ?? 0n);
  return { lines: sample.kept, timeline, t0Ns: t0Ns ?? 0n, icl };
}

function parseLine(file: string, n: number, text: string): ParsedLine | null {
  try {
    return parseRecordLine(text);
  } catch (err) {
    throw new RunLoadError(`${file}:${n}: not a record line (${(err as Error).message})`, file);
  }
}

async function readSummary(file: string): Promise<RunSummary | null> {
  if (!(await isFile(file))) return null;
  try {
    return parseRunSummary(JSON.parse(await readFile(file, 'utf8')));
  } catch (err) {
    throw new RunLoadError(`${file}: not valid JSON (${(err as Error).message})`, file);
  }
}

/** The time slices of the run (`--slice-duration`); empty when the file is missing. */
async function readSlices(file: string, t0Ns: bigint): Promise<SlicePoint[]> {
  if (!(await isFile(file))) return [];
  try {
    return slicesOf(JSON.parse(await readFile(file, 'utf8')), t0Ns);
  } catch (err) {
    throw new RunLoadError(`${file}: not valid JSON (${(err as Error).message})`, file);
  }
}

/**
 * The `run_status.reason` of a summary whose `run_status.status` is `failed` (what a run that
 * stopped on an error after its start leaves); null when the file is missing, unreadable or says
 * anything else.
 */
async function failedReason(file: string): Promise<string | null> {
  try {
    const status = (JSON.parse(await readFile(file, 'utf8')) as { run_status?: unknown }).run_status;
    if (typeof status !== 'object' || status === null) return null;
    const { status: state, reason } = status as { status?: unknown; reason?: unknown };
    return state === 'failed' && typeof reason === 'string' ? reason : null;
  } catch {
    return null;
  }
}

/** Options of {@link loadRun}. */
export interface LoadRunOptions {
  /** The sample's cap instead of {@link REPORT_REQUEST_CAP} (≥ 1; tests set it small to sample a short run). */
  requestCap?: number;
}

/**
 * Loads a run.
 * @param dir artifact directory holding `profile_export.jsonl` (required) and
 *   `profile_export_aiperf.json` (optional; `summary` is null without it).
 * @throws {RunLoadError} when the JSONL file is missing (with the summary's reason when it says the
 *   run failed), or a line is malformed (file:line named), or the summary is not JSON.
 */
export async function loadRun(dir: string, opts: LoadRunOptions = {}): Promise<RunData> {
  const recordsFile = join(dir, RUN_FILES.records);
  if (!(await isFile(recordsFile))) {
    const failed = await failedReason(join(dir, RUN_FILES.summary));
    throw new RunLoadError(
      failed === null
        ? `${dir}: no ${RUN_FILES.records} here; is this a tokenload artifact directory?`
        : `${dir}: no ${RUN_FILES.records} here: the run failed before recording any request (run_status in ${RUN_FILES.summary}): ${failed}`,
      recordsFile,
    );
  }
  const { lines, timeline, t0Ns, icl } = await readLines(recordsFile, opts.requestCap ?? REPORT_REQUEST_CAP);
  const summary = await readSummary(join(dir, RUN_FILES.summary));
  return {
    dir,
    requests: lines.map((l) => toRequestPoint(l, t0Ns)),
    timeline,
    t0Ns,
    summary,
    server: await loadServerRun(dir, t0Ns),
    gpu: await loadGpuRun(dir, t0Ns),
    interChunkLatencyMs: icl.result(),
    slices: await readSlices(join(dir, RUN_FILES.timeslices), t0Ns),
  };
}
