/**
 * Measurement-truth benchmark: how far the client's timings are from what the server actually did.
 * A spawned simulator (engine mode) logs, per request, epoch-ns times of arrival, of every content
 * chunk write and of the end; the client's records are joined to them by X-Request-ID. Both
 * processes map their monotonic clock to epoch ns through `performance.timeOrigin` on the same
 * machine, so times can be compared directly (the minimum send→arrival and write→receipt gaps are
 * printed as a check: they should be ≥ 0 up to a few µs).
 *
 * Figures (ms, p50/p90/p99/max, absolute values unless "signed"):
 * - firstChunkDelayMs: client first content chunk (request_start + TTFT) − server first chunk write;
 * - chunkDelayMs: the same for every content chunk (request_start + TTFT + Σ inter-chunk gaps);
 * - chunkGapErrorMs: |client inter-chunk gap − server gap between the same two writes|;
 * - ttftExcessMs: client TTFT − server TTFT (first write − arrival): send→arrival plus write→receipt;
 * - sendToArrivalMs: client send stamp → server arrival stamp (connect, transfer, server loop delay).
 *
 *   npm run bench:ground-truth -- [--concurrency 200] [--seconds 20] [--isl 500] [--osl 100]
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProfileConfig } from '../src/config/resolve.js';
import { profileConfig } from '../src/config/schema.js';
import { runProfile } from '../src/run/profile.js';
import { spawnSimulator } from '../src/simulator/spawn.js';
import { arg, machine, r3 } from './common.js';

const concurrency = Number(arg('concurrency', '200'));
const seconds = Number(arg('seconds', '20'));
const isl = Number(arg('isl', '500'));
const osl = Number(arg('osl', '100'));
const bailianSpeedup = Number(arg('speedup', '20'));

function baseConfig(url: string, dir: string): ProfileConfig {
  return profileConfig({
    models: ['Qwen/Qwen3-0.6B'],
    url,
    streaming: true,
    randomSeed: 1,
    requestTimeoutSeconds: 600,
    artifactDir: dir,
    gracePeriodSeconds: 60,
    commandLine: 'bench/ground-truth.ts',
  });
}

/** Server-side timeline of one request, epoch ns. */
interface Truth {
  arrival: bigint;
  writes: bigint[];
}

/** Client-side view of one successful streamed request, epoch ns and ms gaps. */
interface Client {
  id: string;
  start: bigint;
  ttftMs: number;
  gapsMs: number[];
}

function readTruth(file: string): Map<string, Truth> {
  const out = new Map<string, Truth>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const t = JSON.parse(line) as {
      x_request_id: string | null;
      status: number;
      fault: string;
      arrival_ns: string;
      chunk_write_ns: string[];
    };
    if (t.x_request_id === null || t.status !== 200 || t.fault !== 'none') continue;
    out.set(t.x_request_id, { arrival: BigInt(t.arrival_ns), writes: t.chunk_write_ns.map(BigInt) });
  }
  return out;
}

/** Successful records; `request_start_ns` is read as text so the epoch ns stays exact. */
function readClient(file: string): Client[] {
  const out: Client[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const rec = JSON.parse(line) as {
      metadata: { x_request_id: string };
      metrics: Record<string, { value: number | number[] } | undefined>;
      error: unknown;
    };
    const ttft = rec.metrics.time_to_first_token?.value;
    const start = /"request_start_ns":(\d+)/.exec(line)?.[1];
    if (rec.error !== null || typeof ttft !== 'number' || start === undefined) continue;
    const gaps = rec.metrics.inter_chunk_latency?.value;
    out.push({
      id: rec.metadata.x_request_id,
      start: BigInt(start),
      ttftMs: ttft,
      gapsMs: Array.isArray(gaps) ? gaps : [],
    });
  }
  return out;
}

/** Linear-interpolation percentile of sorted values. */
function pct(sorted: number[], q: number): number {
  const idx = (q / 100) * (sorted.length - 1);
  const lo = Math.floor(idx);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (idx - lo);
}

function dist(values: number[]): Record<string, number | null> {
  if (values.length === 0) return { n: 0 };
  const abs = values.map(Math.abs).sort((a, b) => a - b);
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return {
    n: values.length,
    p50: r3(pct(abs, 50)),
    p90: r3(pct(abs, 90)),
    p99: r3(pct(abs, 99)),
    max: r3(abs[abs.length - 1]),
    signedMin: r3(min),
    signedMax: r3(max),
  };
}

const nsToMs = (ns: bigint): number => Number(ns) / 1e6;

/** Joins records to the log and computes the figures. */
function compare(truthFile: string, recordsFile: string): Record<string, unknown> {
  const truth = readTruth(truthFile);
  const clients = readClient(recordsFile);
  const first: number[] = [];
  const every: number[] = [];
  const gapErr: number[] = [];
  const excess: number[] = [];
  const sendToArrival: number[] = [];
  let joined = 0;
  let chunkCountMismatch = 0;
  for (const c of clients) {
    const t = truth.get(c.id);
    if (t === undefined || t.writes.length === 0) continue;
    joined++;
    const firstWrite = t.writes[0] as bigint;
    const clientFirstMs = nsToMs(c.start) + c.ttftMs;
    first.push(clientFirstMs - nsToMs(firstWrite));
    excess.push(c.ttftMs - nsToMs(firstWrite - t.arrival));
    sendToArrival.push(nsToMs(t.arrival - c.start));
    if (c.gapsMs.length !== t.writes.length - 1) {
      chunkCountMismatch++;
      continue;
    }
    let at = clientFirstMs - nsToMs(firstWrite);
    every.push(at);
    for (let i = 0; i < c.gapsMs.length; i++) {
      const serverGap = nsToMs((t.writes[i + 1] as bigint) - (t.writes[i] as bigint));
      const clientGap = c.gapsMs[i] as number;
      gapErr.push(clientGap - serverGap);
      at += clientGap - serverGap;
      every.push(at);
    }
  }
  return {
    successfulRecords: clients.length,
    joinedByXRequestId: joined,
    chunkCountMismatch,
    clockCheck: {
      minSendToArrivalMs: r3(Math.min(...sendToArrival)),
      minFirstWriteToReceiptMs: r3(Math.min(...first)),
    },
    sendToArrivalMs: dist(sendToArrival),
    firstChunkDelayMs: dist(first),
    chunkDelayMs: dist(every),
    chunkGapErrorMs: dist(gapErr),
    ttftExcessMs: dist(excess),
  };
}

async function measured(
  name: string,
  make: (url: string, dir: string) => ProfileConfig,
): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), `tokenload-truth-${name}-`));
  const truthFile = join(dir, 'ground-truth.jsonl');
  const sim = await spawnSimulator({ mode: 'engine', groundTruthLog: truthFile });
  const t0 = performance.now();
  let requests = 0;
  try {
    const outcome = await runProfile(make(sim.url, dir), {
      log: { info: () => undefined, warn: (m) => process.stderr.write(`warning: ${m}\n`) },
      stopSignal: new AbortController().signal,
    });
    requests = outcome.recordCount;
  } finally {
    await sim.close();
  }
  const wallSeconds = r3((performance.now() - t0) / 1000);
  return { run: name, requests, wallSeconds, ...compare(truthFile, join(dir, 'profile_export.jsonl')), dir };
}

const results = [
  await measured(`synthetic-c${concurrency}`, (url, dir) => ({
    ...baseConfig(url, dir),
    synthetic: { isl, osl },
    concurrency,
    benchmarkDurationSeconds: seconds,
  })),
  await measured(`bailian-multiturn-x${bailianSpeedup}`, (url, dir) => ({
    ...baseConfig(url, dir),
    inputFile: 'examples/traces/bailian_traceA_multiturn_head40.jsonl',
    customDatasetType: 'bailian_trace',
    fixedSchedule: true,
    synthesisSpeedupRatio: bailianSpeedup,
  })),
];
console.log(
  JSON.stringify(
    {
      benchmark: 'ground-truth',
      machine: machine(),
      method:
        `streaming chat against a spawned simulator (engine mode, defaults) with its ground-truth log; ` +
        `run 1: synthetic ISL ${isl} / OSL ${osl} at concurrency ${concurrency} for ${seconds} s; run 2: ` +
        `bailian_traceA_multiturn_head40 fixed schedule at ${bailianSpeedup}x. Records joined to server ` +
        'lines by X-Request-ID; client chunk times = request_start_ns + TTFT (+ inter_chunk_latency); ' +
        'server times = chunk_write_ns (taken right after each res.write); all epoch ns on one machine',
      results,
    },
    null,
    2,
  ),
);
