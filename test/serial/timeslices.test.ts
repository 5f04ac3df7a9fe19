/**
 * `--slice-duration` (AIPerf docs/tutorials/timeslices.md) through the CLI against the simulator: the
 * files `profile_export_aiperf_timeslices.json` and `.csv` a user reads, checked against the run's own
 * records and summary: one slice per window in which requests started (windows from the earliest
 * request start), each record counted in the slice whose window holds its request start, failed
 * requests included, slices' counts adding up to the run's, an empty window left out, and a last
 * window the run ended inside cut at the run's end and marked `is_complete: false`.
 *
 * Serial: the tutorial's 6 slices need a request to start in every 0.5 s window of a 3 s run, and
 * the trace's empty window needs its rows sent within 0.1 s of their times; a machine stalled for
 * half a second by other tests would leave a window empty. The tutorial's run turns the client
 * warm-up off (`--client-warmup-ms 0`; it took its 5 s cap here): a cold client spends a few ms more
 * on each of its first requests, never the half second that would leave a window empty.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { type ExportedRecord, readRunArtifacts } from '../helpers/run-artifacts.js';

const MODEL = 'Qwen/Qwen3-0.6B';

let sim: RunningSimulator;
let faulty: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 0.2, models: [MODEL] });
  faulty = await startSimulator({
    mode: 'fixed',
    ttftMs: 1,
    itlMs: 0.2,
    models: [MODEL],
    faultRate500: 0.5,
    seed: 3,
  });
});
after(async () => {
  await sim?.close();
  await faulty?.close();
});

interface Count {
  avg: number;
}
interface SliceJson {
  timeslice_index: number;
  start_ns: string;
  end_ns: string;
  is_complete?: boolean;
  request_count: Count;
  error_request_count: Count;
  request_throughput?: Count;
  benchmark_duration?: Count;
  error_summary?: { code: number; count: number }[];
}
interface Summary {
  request_count: Count;
  error_request_count: Count;
}

/** Reads the time-slice JSON with its epoch ns kept exact as strings. */
function readSlices(dir: string): { slices: SliceJson[]; inputConfig: Record<string, unknown> } {
  const text = readFileSync(join(dir, 'profile_export_aiperf_timeslices.json'), 'utf8');
  const doc = JSON.parse(text.replace(/"(start_ns|end_ns)": (\d+)/g, '"$1": "$2"')) as {
    timeslices: SliceJson[];
    input_config: Record<string, unknown>;
  };
  return { slices: doc.timeslices, inputConfig: doc.input_config };
}

/** `Timeslice,Metric,Unit,Stat,Value` rows of the CSV. */
function readCsv(dir: string): { header: string; rows: string[][] } {
  const lines = readFileSync(join(dir, 'profile_export_aiperf_timeslices.csv'), 'utf8').trim().split('\n');
  return { header: lines[0] ?? '', rows: lines.slice(1).map((l) => l.split(',')) };
}

async function profile(flags: string[], url: string): Promise<{ dir: string; console: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-slices-'));
  const args = [
    'profile',
    ...flags,
    '--url',
    url,
    '--artifact-dir',
    dir,
    '--ui',
    'none',
    '--no-server-metrics',
  ];
  const exit = await runCliInProcess(args);
  assert.equal(exit.code, 0, exit.stderr);
  return { dir, console: readFileSync(join(dir, 'profile_export_console.txt'), 'utf8') };
}

const startOf = (r: ExportedRecord): bigint => BigInt(r.metadata.request_start_ns as string);
const endOf = (r: ExportedRecord): bigint => BigInt(r.metadata.request_end_ns as string);

/**
 * Checks what holds for every slicing: slices in time order numbered 0…n−1, each record in exactly
 * the slice whose window holds its start (so the counts add up to the run's), windows on the grid
 * from the earliest start, full length unless marked incomplete, and the CSV naming the same slices.
 */
function checkSlices(dir: string, sliceNs: bigint): SliceJson[] {
  const { records, summary } = readRunArtifacts<Summary>(dir);
  const { slices } = readSlices(dir);
  const byTime = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);
  const origin = records.map(startOf).sort(byTime)[0] as bigint;
  const runEnd = records
    .flatMap((r) => [startOf(r), endOf(r)])
    .sort(byTime)
    .at(-1) as bigint;
  assert.ok(slices.length > 0);
  let counted = 0;
  slices.forEach((s, i) => {
    assert.equal(s.timeslice_index, i);
    const start = BigInt(s.start_ns);
    const end = BigInt(s.end_ns);
    assert.equal((start - origin) % sliceNs, 0n, `slice ${i} starts on the grid from the first request`);
    if (s.is_complete === false) {
      assert.equal(i, slices.length - 1, 'only the last slice can be cut short');
      assert.equal(end, runEnd, 'a cut last slice ends where the run ended');
    } else assert.equal(end - start, sliceNs);
    const inside = records.filter((r) => startOf(r) >= start && startOf(r) < start + sliceNs);
    const ok = inside.filter((r) => r.error === null).length;
    assert.equal(s.request_count.avg, ok, `slice ${i}: successful requests that started in it`);
    assert.equal(
      s.error_request_count.avg,
      inside.length - ok,
      `slice ${i}: failed requests that started in it`,
    );
    assert.ok(inside.length > 0, 'a slice without requests is left out');
    counted += inside.length;
  });
  assert.equal(counted, records.length, 'every record is in one slice');
  const sum = (f: (s: SliceJson) => number) => slices.reduce((a, s) => a + f(s), 0);
  assert.equal(
    sum((s) => s.request_count.avg),
    summary.request_count.avg,
  );
  assert.equal(
    sum((s) => s.error_request_count.avg),
    summary.error_request_count.avg,
  );

  const csv = readCsv(dir);
  assert.equal(csv.header, 'Timeslice,Metric,Unit,Stat,Value');
  const csvSlices = [...new Set(csv.rows.map((r) => Number(r[0])))];
  assert.deepEqual(
    csvSlices,
    slices.map((s) => s.timeslice_index),
  );
  for (const s of slices) {
    const row = csv.rows.find((r) => Number(r[0]) === s.timeslice_index && r[1] === 'Request Count');
    assert.deepEqual(row?.slice(2), ['requests', 'avg', String(s.request_count.avg)]);
  }
  return slices;
}

test('timeslices.md "Simple Time Slicing Example", shortened from 60 s in 10 s slices to 3 s in 0.5 s slices: 6 slices', async () => {
  // The doc's command with only `aiperf` replaced and --url pointed at the simulator; its 60 s run is
  // scaled down 20× (same 6 windows). Concurrency 1 starts requests back to back in every window.
  const { dir, console: consoleText } = await profile(
    ['--model', MODEL, '--benchmark-duration', '3', '--slice-duration', '0.5', '--client-warmup-ms', '0'],
    sim.url,
  );
  const slices = checkSlices(dir, 500_000_000n);
  assert.equal(slices.length, 6, 'a 3 s run in 0.5 s slices creates 6 windows');
  assert.match(consoleText, /Timeslices: .*profile_export_aiperf_timeslices\.json/);
  assert.match(consoleText, /Timeslices CSV: .*profile_export_aiperf_timeslices\.csv/);
  // Per-slice throughput is over the slice's window: its successful requests per second of window.
  for (const s of slices.filter((x) => x.is_complete !== false)) {
    assert.equal(s.benchmark_duration?.avg, 0.5);
    assert.equal(s.request_throughput?.avg, s.request_count.avg / 0.5);
  }
  assert.equal(readSlices(dir).inputConfig.sliceDurationSeconds, 0.5);
});

test('a window without requests is left out, failed requests count in their slice, the last window is cut at the run end', async () => {
  const work = mkdtempSync(join(tmpdir(), 'tokenload-slices-trace-'));
  const trace = join(work, 'gap.jsonl');
  // Starts at 0–0.1 s and 2.6–2.7 s: 1 s windows 0 and 2 have requests, window 1 none.
  const at = [0, 50, 100, 2600, 2650, 2700];
  const rows = at.map((timestamp) => JSON.stringify({ timestamp, input_length: 40, output_length: 4 }));
  writeFileSync(trace, `${rows.join('\n')}\n`);
  const { dir } = await profile(
    [
      ...['--model', MODEL, '--endpoint-type', 'chat', '--streaming'],
      ...['--input-file', trace, '--custom-dataset-type', 'mooncake_trace', '--fixed-schedule'],
      ...['--tokenizer', 'builtin', '--client-warmup-ms', '0', '--slice-duration', '1'],
    ],
    faulty.url,
  );
  const slices = checkSlices(dir, 1_000_000_000n);
  assert.equal(slices.length, 2, 'windows 0 and 2; the empty window 1 is left out');
  const [first, last] = slices as [SliceJson, SliceJson];
  assert.equal(BigInt(last.start_ns) - BigInt(first.start_ns), 2_000_000_000n);
  assert.equal(last.is_complete, false, 'the run ended 0.7 s into the last window');
  const { summary } = readRunArtifacts<Summary>(dir);
  assert.ok(summary.error_request_count.avg > 0, 'the simulator failed some requests (seeded)');
  for (const s of slices) {
    const listed = (s.error_summary ?? []).reduce((a, e) => a + e.count, 0);
    assert.equal(listed, s.error_request_count.avg, 'the slice error summary lists its failures');
  }
});
