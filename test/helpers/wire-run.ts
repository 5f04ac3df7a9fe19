/**
 * Runs `runProfile` for the wire-stamp tests (test/serial/wire-stamps.test.ts and
 * test/integration/wire-stamps-counts.test.ts): a synthetic streamed run (ISL 24, OSL 4, seed 5, no
 * client warm-up) with its records' `*_ns` fields kept exact as strings, its summary, and, against
 * the simulator, the arrival the simulator's ground-truth log stamped for each request.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';

/** One record line, its `*_ns` fields as decimal strings. */
export interface Line {
  metadata: {
    x_request_id: string;
    request_scheduled_ns: string | null;
    request_start_ns: string;
    request_sent_ns: string | null;
    connection_reused: boolean | null;
    request_ack_ns: string | null;
    request_end_ns: string;
  };
  metrics: Record<string, { value: number }>;
  error: { kind: string; message: string } | null;
}

/** The summary's `connections` section. */
export interface Connections {
  prewarm: { requested: number; opened: number; failed: number; basis: string };
  requests_on_open_connections: number;
  requests_on_new_connections: number;
}

const SILENT = { info: () => undefined, warn: () => undefined };

function config(dir: string, url: string, over: Partial<ProfileConfigInput>): ProfileConfig {
  return profileConfig({
    models: ['sim-model'],
    tokenizer: 'builtin',
    url,
    streaming: true,
    synthetic: { isl: 24, osl: 4, numDatasetEntries: 20 },
    randomSeed: 5,
    requestTimeoutSeconds: 30,
    artifactDir: dir,
    gracePeriodSeconds: 5,
    clientWarmupMs: 0,
    commandLine: 'test',
    ...over,
  });
}

/** Runs a profile against `url` with `over` applied; its records and summary. */
export async function profile(
  url: string,
  over: Partial<ProfileConfigInput>,
): Promise<{ lines: Line[]; summary: Record<string, unknown> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-wire-'));
  await runProfile(config(dir, url, over), { log: SILENT, stopSignal: new AbortController().signal });
  const text = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim();
  const lines = text.split('\n').map((l) => JSON.parse(l.replace(/"(\w+_ns)":(\d+)/g, '"$1":"$2"')) as Line);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  return { lines, summary };
}

/** An exported `*_ns` string as a bigint. */
export const ns = (text: string | null): bigint => BigInt(text ?? 'NaN');

/**
 * {@link profile} against a fixed-mode simulator (5 ms TTFT, 2 ms ITL) started for the run, whose
 * ground-truth log stamps each request's arrival: `arrivals` by x-request-id, epoch ns.
 */
export async function profileSimulator(over: Partial<ProfileConfigInput>) {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-wire-truth-'));
  const truthPath = join(dir, 'truth.jsonl');
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 2, groundTruthLog: truthPath });
  try {
    const run = await profile(sim.url, over);
    const arrivals = new Map<string, bigint>();
    for (const l of readFileSync(truthPath, 'utf8').trim().split('\n')) {
      const t = JSON.parse(l) as { x_request_id: string; arrival_ns: string };
      arrivals.set(t.x_request_id, BigInt(t.arrival_ns));
    }
    return { ...run, arrivals };
  } finally {
    await sim.close();
  }
}
