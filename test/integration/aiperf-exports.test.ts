/**
 * The artifacts of `tokenload profile` in AIPerf's shapes, read as a user (or an AIPerf reader)
 * reads them, from runs of the CLI against the built-in simulator: the summary's provenance keys
 * (`schema_version`, `aiperf_version`, `benchmark_id`, `run_info`, `input_config` in AIPerf's nested
 * layout beside tokenload's `tokenload_config`).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type SpawnedSimulator, spawnSimulator } from '../../src/simulator/spawn.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-aiperf-exports-'));
  dirs.push(dir);
  return dir;
}

/** A small synthetic chat run; `extra` flags are appended. */
const COMMON = [
  'profile',
  '--model',
  'Qwen/Qwen3-0.6B',
  '--endpoint-type',
  'chat',
  '--streaming',
  '--client-warmup-ms',
  '0',
  '--tokenizer',
  'builtin',
  '--isl',
  '20',
  '--osl',
  '4',
  '--ui',
  'none',
];

/**
 * The built-in simulator the runs share (fixed mode, 1 ms to the first token, the rest at once: many
 * short requests fast), started once for the file: `--simulator` would start one for every run of
 * every sweep value and trial. The first test runs with `--simulator` itself.
 */
let sim: SpawnedSimulator | undefined;
before(async () => {
  sim = await spawnSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 0, warmupMs: 0 });
});
after(async () => {
  await sim?.close();
});

/** {@link COMMON} against the shared simulator. */
const base = (): string[] => [...COMMON, '--url', sim?.url ?? ''];

// biome-ignore lint/suspicious/noExplicitAny: parsed artifact JSON, checked key by key below
type Json = Record<string, any>;

function readJson(path: string): Json {
  return JSON.parse(readFileSync(path, 'utf8'));
}

test('the summary carries AIPerf provenance keys and input_config in AIPerf layout', async () => {
  const dir = join(tempDir(), 'run');
  const r = await runCliInProcess([
    ...COMMON,
    '--simulator',
    '--simulator-option',
    'warmup-ms=0',
    '--concurrency',
    '2',
    '--request-count',
    '4',
    '--random-seed',
    '7',
    '--conversation-num',
    '4',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const s = readJson(join(dir, 'profile_export_aiperf.json'));
  assert.equal(s.input_config.input.conversation.num, 4);
  assert.equal(s.schema_version, '1.5');
  assert.equal(s.aiperf_version, `tokenload-${s.tokenload_version}`);
  assert.match(s.benchmark_id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal(s.run_info.benchmark_id, s.benchmark_id);
  assert.equal(s.run_info.random_seed, 7);
  assert.equal(s.run_info.run_label, 'run_0001');
  assert.equal(s.run_info.variation_label, 'base');
  assert.equal(s.run_info.sweep_id, null);
  assert.match(s.run_info.cli_command, /--request-count 4/);
  assert.deepEqual(s.input_config.endpoint.model_names, ['Qwen/Qwen3-0.6B']);
  assert.equal(s.input_config.endpoint.type, 'chat');
  assert.equal(s.input_config.endpoint.streaming, true);
  assert.equal(s.input_config.loadgen.concurrency, 2);
  assert.equal(s.input_config.loadgen.request_count, 4);
  assert.equal(s.input_config.input.prompt.input_tokens.mean, 20);
  assert.equal(s.input_config.input.prompt.output_tokens.mean, 4);
  assert.equal(s.input_config.input.random_seed, 7);
  assert.equal(s.input_config.output.artifact_directory, dir);
  // The server measured is the simulator the run started, not the default --url (found by a new user).
  const started = /simulator started at (http:\/\/127\.0\.0\.1:\d+)/.exec(r.stderr)?.[1];
  assert.ok(started !== undefined, r.stderr);
  assert.deepEqual(s.input_config.endpoint.urls, [started]);
  assert.equal(s.tokenload_config.concurrency, 2);
  assert.equal(s.request_count.avg, 4);
  // A second run writes a new benchmark id.
  assert.equal((await runCliInProcess([...base(), '--request-count', '1', '--artifact-dir', dir])).code, 0);
  assert.notEqual(readJson(join(dir, 'profile_export_aiperf.json')).benchmark_id, s.benchmark_id);
});

function lines(path: string): Json[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

test('--export-level raw writes profile_export_raw.jsonl: each request body and its response chunks', async () => {
  const dir = join(tempDir(), 'raw');
  const r = await runCliInProcess([
    ...base(),
    '--request-count',
    '3',
    '--export-level',
    'raw',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const records = lines(join(dir, 'profile_export.jsonl'));
  const raw = lines(join(dir, 'profile_export_raw.jsonl'));
  assert.equal(raw.length, 3);
  assert.deepEqual(
    raw.map((l) => l.metadata.x_request_id).sort(),
    records.map((l) => l.metadata.x_request_id).sort(),
  );
  for (const line of raw) {
    assert.equal(line.status, 200);
    assert.equal(line.error, null);
    assert.equal(line.payload.model, 'Qwen/Qwen3-0.6B');
    assert.equal(line.payload.stream, true);
    assert.equal(line.payload.messages[0].role, 'user');
    assert.ok(line.responses.length >= 1);
    assert.equal(typeof line.responses[0].perf_ns, 'number');
    const text = line.responses.map((c: { text: string }) => c.text).join('');
    assert.ok(text.length > 0);
  }
});

test('--profile-export-level summary leaves profile_export.jsonl out; --auto-plot is accepted', async () => {
  const dir = join(tempDir(), 'summary');
  const r = await runCliInProcess([
    ...base(),
    '--request-count',
    '2',
    '--profile-export-level',
    'summary',
    '--auto-plot',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(existsSync(join(dir, 'profile_export.jsonl')), false);
  assert.equal(existsSync(join(dir, 'profile_export_raw.jsonl')), false);
  assert.equal(readJson(join(dir, 'profile_export_aiperf.json')).request_count.avg, 2);
  assert.equal(readJson(join(dir, 'profile_export_aiperf.json')).input_config.output.export_level, 'summary');
  assert.ok(existsSync(join(dir, 'report.html')));
});

test('a --concurrency list runs in concurrency_<n>/ folders and writes sweep_aggregate/', async () => {
  const dir = join(tempDir(), 'sweep');
  const r = await runCliInProcess([
    ...base(),
    '--concurrency',
    '1,2',
    '--request-count',
    '4',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  for (const [i, value] of [1, 2].entries()) {
    const s = readJson(join(dir, `concurrency_${value}`, 'profile_export_aiperf.json'));
    assert.equal(s.request_count.avg, 4);
    assert.equal(s.input_config.loadgen.concurrency, value);
    assert.equal(s.run_info.variation_label, `concurrency_${value}`);
    assert.equal(s.run_info.variation_index, i);
    assert.deepEqual(s.run_info.variation_values, { 'loadgen.concurrency': value });
  }
  const first = readJson(join(dir, 'concurrency_1', 'profile_export_aiperf.json'));
  const second = readJson(join(dir, 'concurrency_2', 'profile_export_aiperf.json'));
  assert.match(first.run_info.sweep_id, /^[0-9a-f-]{36}$/);
  assert.equal(first.run_info.sweep_id, second.run_info.sweep_id);
  const sweep = readJson(join(dir, 'sweep_aggregate', 'profile_export_aiperf_sweep.json'));
  assert.equal(sweep.aggregation_type, 'sweep');
  assert.equal(sweep.num_profile_runs, 2);
  assert.equal(sweep.num_successful_runs, 2);
  assert.deepEqual(sweep.metadata.sweep_parameters, [{ name: 'concurrency', values: [1, 2] }]);
  assert.deepEqual(
    sweep.per_combination_metrics.map((c: Json) => c.parameters),
    [{ concurrency: 1 }, { concurrency: 2 }],
  );
  // One run per value: the mean (that run's value) and its unit, as each run's own summary says.
  assert.deepEqual(sweep.per_combination_metrics[1].metrics.request_throughput_avg, {
    mean: second.request_throughput.avg,
    unit: 'requests/sec',
  });
  assert.ok(sweep.pareto_optimal.length >= 1);
  assert.ok(['1', '2'].includes(String(sweep.best_configurations.best_throughput.parameters.concurrency)));
  assert.match(
    readFileSync(join(dir, 'sweep_aggregate', 'profile_export_aiperf_sweep.csv'), 'utf8'),
    /^concurrency,/,
  );
});

test('--num-profile-runs 3 runs in profile_runs/run_000N/ and writes aggregate/ with t intervals', async () => {
  const dir = join(tempDir(), 'multi');
  const r = await runCliInProcess([
    ...base(),
    '--request-count',
    '3',
    '--num-profile-runs',
    '3',
    '--confidence-level',
    '0.9',
    '--profile-run-cooldown-seconds',
    '0.1',
    '--warmup-request-count',
    '1',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const runs = [1, 2, 3].map((n) =>
    readJson(join(dir, 'profile_runs', `run_000${n}`, 'profile_export_aiperf.json')),
  );
  // One workload: the same seed (42 when none is given) for every run; warmup in the first only.
  assert.deepEqual(
    runs.map((s) => s.run_info.random_seed),
    [42, 42, 42],
  );
  assert.deepEqual(
    runs.map((s) => s.run_info.run_label),
    ['run_0001', 'run_0002', 'run_0003'],
  );
  assert.deepEqual(
    runs.map((s) => s.input_config.loadgen.warmup_request_count),
    [1, undefined, undefined],
  );
  const aggregate = readJson(join(dir, 'aggregate', 'profile_export_aiperf_aggregate.json'));
  assert.equal(aggregate.metadata.aggregation_type, 'confidence');
  assert.equal(aggregate.metadata.num_profile_runs, 3);
  assert.equal(aggregate.metadata.num_successful_runs, 3);
  assert.equal(aggregate.metadata.confidence_level, 0.9);
  assert.deepEqual(aggregate.metadata.run_labels, ['run_0001', 'run_0002', 'run_0003']);
  const ttft = aggregate.metrics.time_to_first_token_p99;
  const perRun = runs.map((s) => s.time_to_first_token.p99);
  assert.equal(ttft.min, Math.min(...perRun));
  assert.equal(ttft.max, Math.max(...perRun));
  assert.ok(ttft.ci_low <= ttft.mean && ttft.mean <= ttft.ci_high);
  // Student's t, 2 degrees of freedom, two-sided 90 %: 2.920 (any t table).
  assert.equal(ttft.t_critical.toFixed(3), '2.920');
  assert.equal(aggregate.metrics.request_count_avg.mean, 3);
  assert.match(
    readFileSync(join(dir, 'aggregate', 'profile_export_aiperf_aggregate.csv'), 'utf8'),
    /^Metric,mean,std/,
  );
});

test('server_metrics_metadata.json names each family of each endpoint; logs/aiperf.log holds the run log', async () => {
  const dir = join(tempDir(), 'meta');
  const r = await runCliInProcess([...base(), '--request-count', '2', '--artifact-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  const meta = readJson(join(dir, 'server_metrics_metadata.json'));
  const urls = Object.keys(meta.endpoints);
  assert.equal(urls.length, 1);
  const endpoint = meta.endpoints[urls[0] as string];
  assert.equal(endpoint.endpoint_url, urls[0]);
  // Every family the scrapes held (server_metrics_export.jsonl) has a schema.
  const scraped = new Set(
    lines(join(dir, 'server_metrics_export.jsonl')).flatMap((l) => Object.keys(l.metrics)),
  );
  assert.deepEqual(Object.keys(endpoint.metric_schemas).sort(), [...scraped].sort());
  const vllmRunning = endpoint.metric_schemas['vllm:num_requests_running'];
  assert.equal(vllmRunning.type, 'gauge');
  assert.equal(vllmRunning.bucket_labels, null);
  assert.ok(vllmRunning.help.length > 0);
  const log = readFileSync(join(dir, 'logs', 'aiperf.log'), 'utf8');
  assert.match(log, /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO /m);
  assert.match(log, /profiling: /);
});

test('an --input-file among the files a multi-run replaces is refused before anything is touched', async () => {
  const dir = join(tempDir(), 'multi-input');
  mkdirSync(join(dir, 'profile_runs', 'run_0001'), { recursive: true });
  for (const input of [join(dir, 'inputs.json'), join(dir, 'profile_runs', 'run_0001', 'inputs.json')]) {
    writeFileSync(input, '{"text": "hello"}\n');
    const r = await runCliInProcess([
      ...base(),
      '--input-file',
      input,
      '--custom-dataset-type',
      'single_turn',
      '--num-profile-runs',
      '2',
      '--artifact-dir',
      dir,
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /is one of the files this run replaces in --artifact-dir/);
    assert.equal(readFileSync(input, 'utf8'), '{"text": "hello"}\n');
  }
});

test('a sweep with --num-profile-runs: repeated trials (default) and independent values, each in AIPerf’s folders', async () => {
  const sweep = [...base(), '--concurrency', '1,2', '--request-count', '2', '--num-profile-runs', '2'];
  const repeated = join(tempDir(), 'repeated');
  assert.equal((await runCliInProcess([...sweep, '--random-seed', '5', '--artifact-dir', repeated])).code, 0);
  const seeds = [];
  for (const trial of ['trial_0001', 'trial_0002'])
    for (const value of ['concurrency_1', 'concurrency_2'])
      seeds.push(
        readJson(join(repeated, 'profile_runs', trial, value, 'profile_export_aiperf.json')).run_info
          .random_seed,
      );
  // Value i runs with the seed + i, the same in every trial.
  assert.deepEqual(seeds, [5, 6, 5, 6]);
  for (const value of ['concurrency_1', 'concurrency_2'])
    assert.equal(
      readJson(join(repeated, 'aggregate', value, 'profile_export_aiperf_aggregate.json')).metadata
        .num_profile_runs,
      2,
    );
  const rSweep = readJson(join(repeated, 'aggregate', 'sweep_aggregate', 'profile_export_aiperf_sweep.json'));
  assert.equal(rSweep.metadata.sweep_mode, 'repeated');
  assert.equal(rSweep.metadata.num_trials_per_value, 2);
  assert.equal(rSweep.per_combination_metrics[0].metrics.request_count_avg.mean, 2);
  assert.equal(rSweep.per_combination_metrics[0].metrics.request_count_avg.std, 0);

  const independent = join(tempDir(), 'independent');
  const r = await runCliInProcess([
    ...sweep,
    '--parameter-sweep-mode',
    'independent',
    '--parameter-sweep-same-seed',
    '--random-seed',
    '5',
    '--artifact-dir',
    independent,
  ]);
  assert.equal(r.code, 0, r.stderr);
  for (const value of ['concurrency_1', 'concurrency_2']) {
    for (const trial of ['trial_0001', 'trial_0002'])
      assert.equal(
        readJson(join(independent, value, 'profile_runs', trial, 'profile_export_aiperf.json')).run_info
          .random_seed,
        5,
      );
    assert.equal(
      readJson(join(independent, value, 'aggregate', 'profile_export_aiperf_aggregate.json')).metadata
        .num_successful_runs,
      2,
    );
  }
  const iSweep = readJson(join(independent, 'sweep_aggregate', 'profile_export_aiperf_sweep.json'));
  assert.equal(iSweep.metadata.sweep_mode, 'independent');
  assert.equal(iSweep.num_profile_runs, 4);
});

const STAT_PERCENTILES = ['p1', 'p5', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99'];

/** Each per-record metric of `doc` (a summary or a time slice): its tag and statistics. */
function distributions(doc: Json): [string, Json][] {
  return Object.entries(doc).filter(([, m]) => typeof m === 'object' && m !== null && 'count' in m);
}

/** Every percentile of every distribution of `doc` has a 95 % interval around its value. */
function assertIntervalsAround(doc: Json): void {
  for (const [tag, m] of distributions(doc)) {
    const keys = [...STAT_PERCENTILES, ...('p999' in m ? ['p999'] : [])];
    assert.deepEqual(Object.keys(m.ci95), keys, tag);
    for (const key of keys) {
      const { low, high } = m.ci95[key];
      assert.ok(
        (low ?? -Infinity) <= m[key] && m[key] <= (high ?? Infinity),
        `${tag} ${key} ${m[key]} ${low} ${high}`,
      );
    }
  }
}

test('every percentile carries a 95 % interval; p99 bounded at 3,000 requests, open at 300; p99.9 from 3,688 values', async () => {
  const root = tempDir();
  const run = async (n: number, extra: string[]): Promise<{ s: Json; console: string; dir: string }> => {
    const dir = join(root, `n${n}`);
    const r = await runCliInProcess([
      ...base(),
      '--concurrency',
      '64',
      '--request-count',
      `${n}`,
      ...extra,
      '--artifact-dir',
      dir,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const console = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
    return { s: readJson(join(dir, 'profile_export_aiperf.json')), console, dir };
  };
  const small = await run(300, []);
  const large = await run(3000, ['--slice-duration', '0.5']);
  for (const { s } of [small, large]) assertIntervalsAround(s);
  // 300 values cannot bound p99 from above (0.99^300 = 4.9 % > 2.5 %); 3,000 can, on both sides.
  assert.equal(small.s.time_to_first_token.ci95.p99.high, null);
  const p99 = large.s.time_to_first_token.ci95.p99;
  assert.ok(p99.low !== null && p99.high !== null);
  // p99.9 needs 3,688 values: not the 3,000 latencies, but the 9,000 chunk gaps (3 per request).
  assert.equal(large.s.request_latency.p999, undefined);
  assert.equal(large.s.inter_chunk_latency.count, 9000);
  assert.equal(typeof large.s.inter_chunk_latency.p999, 'number');
  assert.equal(small.s.inter_chunk_latency.p999, undefined);
  // The console names the 300-run's p99s that vary; at 3,000 a metric is named exactly when its
  // interval is wider than 20 % of its p99.
  assert.match(
    small.console,
    /^Note: p99 rests on few values .* for Time to First Token \(3 of 300 values rank above it; 95 % interval [\d.,]+ to none ms\)/m,
  );
  assert.match(small.console, /Request Latency \(3 of 300 values/);
  const wide = (m: Json): boolean => m.ci95.p99.high - m.ci95.p99.low > 0.2 * m.p99;
  for (const [tag, header] of [
    ['time_to_first_token', 'Time to First Token'],
    ['request_latency', 'Request Latency'],
  ] as const)
    assert.equal(large.console.includes(`${header} (30 of 3000 values`), wide(large.s[tag]), large.console);
  // Time slices carry the intervals in their JSON; both CSVs keep AIPerf's statistics only.
  const slices = readJson(join(large.dir, 'profile_export_aiperf_timeslices.json')).timeslices as Json[];
  assert.ok(slices.length >= 1);
  for (const slice of slices) assertIntervalsAround(slice);
  const csv = readFileSync(join(large.dir, 'profile_export_aiperf.csv'), 'utf8');
  assert.equal(csv.split('\n')[0], 'Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std');
  const sliceCsv = readFileSync(join(large.dir, 'profile_export_aiperf_timeslices.csv'), 'utf8');
  assert.doesNotMatch(sliceCsv, /ci95|p999|low|high/);
});
