/**
 * `--workers auto` and the worker pool as a user checks them: the choice stated on the console and
 * in the summary's `client_workers` (on this machine through the CLI; on a claimed 8-core machine
 * through `runProfile`'s `env.machine`, the test-only override of run/workers-auto.ts), every record
 * complete whatever the choice, the client-floor probe run on the worker threads, and a fixed
 * schedule's burst sent through workers on connections reserved ahead of it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';
import type { MachineOverride } from '../../src/util/run-env.js';
import { runCliProcess } from '../helpers/cli-process.js';

const SILENT = { info: () => undefined, warn: () => undefined };

interface WorkersSection {
  asked: string;
  workers: number;
  cores: number;
  demand: { value: number; unit: string; source: string } | null;
  per_thread: { value: number; source: string } | null;
  basis: string;
}

interface Summary {
  request_count: { avg: number };
  error_request_count?: { avg: number };
  client_workers?: WorkersSection;
  client_health?: { workers?: unknown[]; floor_threads?: string; wake_floor_ms: { count?: number } };
  connections?: { requests_on_new_connections: number; requests_on_open_connections: number };
}

interface JsonlRecord {
  metadata: { connection_reused: boolean | null; request_sent_ns: number | null; x_request_id: string };
  metrics: Record<string, { value: unknown } | undefined>;
  error?: unknown;
}

function readRun(dir: string): { summary: Summary; records: JsonlRecord[] } {
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
  const lines = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  return { summary, records: lines.map((l) => JSON.parse(l) as JsonlRecord) };
}

/** Every record answered: no error, a streamed answer with its output tokens. */
function assertComplete(records: readonly JsonlRecord[], count: number): void {
  assert.equal(records.length, count);
  assert.equal(new Set(records.map((r) => r.metadata.x_request_id)).size, count);
  for (const r of records) {
    assert.equal(r.error ?? null, null);
    assert.equal(typeof r.metrics.output_sequence_length?.value, 'number');
    assert.ok((r.metrics.output_sequence_length?.value as number) > 0);
  }
}

test('--workers auto through the CLI on this machine: the choice and its reason are stated, the run is complete', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-workers-cli-'));
  // No calibration file: HOME is an empty folder, so the choice rests on the stated defaults.
  const home = mkdtempSync(join(tmpdir(), 'tokenload-workers-home-'));
  const args = ['profile', '--simulator', '-m', 'sim-model', '--tokenizer', 'builtin', '--streaming'];
  args.push('--request-rate', '50', '--request-count', '30', '--workers', 'auto', '--artifact-dir', dir);
  args.push('--client-warmup-ms', '0', '--no-server-metrics', '--simulator-option', 'mode=fixed');
  // The choice and the records are read, not times: the simulator's own warm-up (1 s of CPU) is off too.
  args.push('--simulator-option', 'warmup-ms=0');
  const out = await runCliProcess(args, { ...process.env, HOME: home });
  assert.equal(out.code, 0, out.stderr);
  const { summary, records } = readRun(dir);
  const choice = summary.client_workers;
  assert.ok(choice !== undefined, 'client_workers section');
  assert.equal(choice.asked, 'auto');
  assert.equal(choice.cores, availableParallelism());
  // 50 req/s is far below one thread's default capacity, whatever the cores.
  assert.equal(choice.workers, 1);
  assert.deepEqual(choice.demand, { value: 50, unit: 'req/s', source: '--request-rate' });
  assert.match(choice.per_thread?.source ?? '', /default, no calibration/);
  assert.match(choice.basis, /^1 \(single-process\): one thread carries 50 req\/s/);
  // Stated on the console: the log line while it starts and the report's head.
  assert.ok(out.stderr.includes(`--workers auto: ${choice.basis}`), out.stderr);
  assert.ok(out.stdout.includes(`--workers auto: ${choice.basis}`), out.stdout);
  assert.equal(summary.client_health?.workers, undefined, 'single-process: no worker threads ran');
  assert.equal(summary.request_count.avg, 30);
  assertComplete(records, 30);
});

function calibrationFile(dir: string, maxRequestRatePerS: number, workers: number): string {
  const path = join(dir, 'calibration.json');
  const step = { target: 50 };
  writeFileSync(
    path,
    JSON.stringify({
      schemaVersion: 2,
      measuredAt: '2026-01-01T00:00:00.000Z',
      node: process.version,
      cpus: 8,
      workers,
      maxRequestRatePerS,
      concurrentStreams: 400,
      sseEventsPerS: 10_000,
      rateSteps: [step],
      streamSteps: [step],
    }),
  );
  return path;
}

async function profileOn(
  machine: MachineOverride,
  over: Partial<ProfileConfigInput>,
  url: string,
  dir: string,
) {
  const input: ProfileConfigInput = {
    models: ['sim-model'],
    tokenizer: 'builtin',
    url,
    streaming: true,
    randomSeed: 5,
    artifactDir: dir,
    clientWarmupMs: 0,
    serverMetrics: false,
    commandLine: 'test',
    ...over,
  };
  return runProfile(input, { log: SILENT, stopSignal: new AbortController().signal, machine });
}

test('a claimed 8-core machine whose calibration holds less than the rate: several worker threads, every record complete', async () => {
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 1 });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'tokenload-workers-8-'));
    // Calibrated at 80 req/s with 2 workers: 40 req/s per thread; 120 req/s needs 3 threads.
    const machine = { cores: 8, calibrationPath: calibrationFile(dir, 80, 2) };
    await profileOn(machine, { requestRate: 120, requestCount: 60, workers: 'auto' }, sim.url, dir);
    const { summary, records } = readRun(dir);
    const choice = summary.client_workers;
    assert.ok(choice !== undefined);
    assert.equal(choice.cores, 8);
    assert.deepEqual(choice.per_thread, {
      value: 40,
      source: 'tokenload calibrate, 2026-01-01T00:00:00.000Z: 80 req/s over its 2 workers',
    });
    assert.equal(choice.workers, 3);
    assert.match(choice.basis, /^3 worker threads: 120 req\/s \(--request-rate\) over 40 req\/s per thread/);
    // The pool ran with that many threads, and the floor was probed on them (where the sends ran).
    assert.equal(summary.client_health?.workers?.length, 3);
    assert.equal(summary.client_health?.floor_threads, 'main thread and 3 worker threads');
    assert.ok((summary.client_health?.wake_floor_ms.count ?? 0) > 0);
    assert.equal(summary.request_count.avg, 60);
    assertComplete(records, 60);
  } finally {
    await sim.close();
  }
});

test('a claimed 8-core machine asked for more than 7 threads carry: capped at cores − 1, saying so', async () => {
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'tokenload-workers-cap-'));
    const machine = { cores: 8, calibrationPath: calibrationFile(dir, 10, 1) };
    await profileOn(machine, { requestRate: 100, requestCount: 20, workers: 'auto' }, sim.url, dir);
    const { summary, records } = readRun(dir);
    assert.equal(summary.client_workers?.workers, 7);
    assert.match(summary.client_workers?.basis ?? '', /needs 10, capped at 7 \(cores − 1/);
    assert.equal(summary.client_health?.workers?.length, 7);
    assertComplete(records, 20);
  } finally {
    await sim.close();
  }
});

test('a fixed-schedule burst sent through worker threads goes out on connections reserved ahead of it', async () => {
  // The first four requests hold their connections for 3 s; the next four are due at 1.5 s, so only
  // connections the workers open ahead of them (the schedule's reservation) can carry them.
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 3000, itlMs: 1 });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'tokenload-workers-reserve-'));
    const rows = [0, 0, 0, 0, 1500, 1500, 1500, 1500].map((ts) => ({
      timestamp: ts,
      input_length: 600,
      output_length: 1,
      hash_ids: [7, 8],
    }));
    const trace = join(dir, 'trace.jsonl');
    writeFileSync(trace, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    await profileOn(
      {},
      {
        inputFile: trace,
        customDatasetType: 'mooncake_trace',
        fixedSchedule: true,
        workers: 2,
        prewarmConnections: 4,
        requestTimeoutSeconds: 30,
        gracePeriodSeconds: 5,
      },
      sim.url,
      dir,
    );
    const { summary, records } = readRun(dir);
    assert.equal(summary.client_health?.workers?.length, 2);
    assert.equal(summary.connections?.requests_on_new_connections, 0);
    assert.equal(summary.connections?.requests_on_open_connections, 8);
    assert.equal(records.length, 8);
    for (const r of records) {
      assert.equal(r.metadata.connection_reused, true);
      assert.equal(r.metrics.connect_time, undefined);
    }
  } finally {
    await sim.close();
  }
});

test('--workers N on as many cores or fewer warns that the threads share the cores; fewer does not', async () => {
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 });
  try {
    const run = async (cores: number): Promise<string[]> => {
      const warnings: string[] = [];
      const dir = mkdtempSync(join(tmpdir(), 'tokenload-workers-over-'));
      const input: ProfileConfigInput = {
        models: ['sim-model'],
        tokenizer: 'builtin',
        url: sim.url,
        streaming: true,
        artifactDir: dir,
        clientWarmupMs: 0,
        serverMetrics: false,
        requestRate: 50,
        requestCount: 4,
        workers: 2,
      };
      const log = { info: () => undefined, warn: (m: string) => warnings.push(m) };
      await runProfile(input, { log, stopSignal: new AbortController().signal, machine: { cores } });
      assertComplete(readRun(dir).records, 4);
      return warnings;
    };
    const shared = await run(2);
    assert.ok(
      shared.some((w) => /^--workers 2: 2 sending threads and the main thread share 2 cores/.test(w)),
      JSON.stringify(shared),
    );
    assert.ok(!(await run(4)).some((w) => w.startsWith('--workers 2:')));
  } finally {
    await sim.close();
  }
});
