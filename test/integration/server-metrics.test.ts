/**
 * Issue 15 scope 3, through `runProfile`: the server's Prometheus `/metrics` is scraped while the
 * run goes, on the records' clock; the summary's `server_metrics` section covers the benchmark
 * window (counters as deltas, the hit rate from counter deltas); `server_metrics_export.jsonl`,
 * `.json` and `.csv` are written; the report draws the series. Against the engine-mode simulator
 * (vLLM's names), and a fake SGLang endpoint (labels, escapes, a histogram, a counter reset, missing
 * series); an endpoint without metrics is one warning, never an error.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';

interface Entry {
  kind: string;
  source?: string;
  samples?: number;
  min?: number | null;
  avg?: number | null;
  max?: number | null;
  delta?: number;
  resets?: number;
  value?: number | null;
  hits_source?: string;
  queries_source?: string;
}

interface EndpointSection {
  url: string;
  status: string;
  reason: string | null;
  server: string | null;
  scrapes: number;
  metrics: Record<string, Entry>;
  missing: string[];
}

interface Summary {
  server_metrics?: { interval_ms: number; window: { basis: string }; endpoints: EndpointSection[] };
  cache_check?: {
    reported_cached_tokens: number;
    reported_prompt_tokens: number;
    reported_hit_ratio: number;
  };
  warnings: string[];
}

let sim: RunningSimulator;
const dirs: string[] = [];
before(async () => {
  sim = await startSimulator({ mode: 'engine', models: ['Qwen/Qwen3-0.6B'] });
});
after(async () => {
  await sim.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function replay(over: Partial<ProfileConfigInput> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-server-metrics-'));
  dirs.push(dir);
  const warnings: string[] = [];
  const outcome = await runProfile(
    profileConfig({
      models: ['Qwen/Qwen3-0.6B'],
      url: sim.url,
      streaming: true,
      inputFile: TRACE,
      customDatasetType: 'bailian_trace',
      synthesisSpeedupRatio: 100,
      randomSeed: 11,
      serverMetricsIntervalMs: 200,
      artifactDir: dir,
      ui: 'none',
      clientWarmupMs: 0,
      commandLine: 'server metrics test',
      ...over,
    }),
    {
      log: { info: () => undefined, warn: (m) => warnings.push(m) },
      stopSignal: new AbortController().signal,
    },
  );
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
  return { dir, outcome, summary, warnings };
}

const epochNs = (text: string, key: string): bigint[] =>
  [...text.matchAll(new RegExp(`"${key}":(\\d+)`, 'g'))].map((m) => BigInt(m[1] as string));

test('a replay against the simulator: server_metrics over the window, counters matching the requests, files and charts', async () => {
  const { dir, outcome, summary, warnings } = await replay();
  assert.deepEqual(warnings, []);
  const section = summary.server_metrics;
  assert.ok(section !== undefined, 'the summary has a server_metrics section');
  assert.equal(section.interval_ms, 200);
  assert.equal(section.window.basis, 'first send to last response');
  const [sim0] = section.endpoints;
  assert.ok(sim0 !== undefined);
  assert.deepEqual([sim0.url, sim0.status, sim0.server], [`${sim.url}/metrics`, 'ok', 'vllm']);
  assert.deepEqual(sim0.missing, ['server_cache_hit_rate']);
  for (const key of ['running_requests', 'waiting_requests', 'kv_cache_usage']) {
    const g = sim0.metrics[key];
    assert.ok(g !== undefined && g.kind === 'gauge' && (g.samples ?? 0) > 0, key);
    assert.ok((g.min as number) <= (g.avg as number) && (g.avg as number) <= (g.max as number), key);
  }
  assert.ok((sim0.metrics.kv_cache_usage?.max as number) <= 1);
  // The counters' deltas over the window are exactly this run's requests as the server counted them.
  const cache = summary.cache_check;
  assert.ok(cache !== undefined);
  assert.equal(sim0.metrics.prompt_tokens?.delta, cache.reported_prompt_tokens);
  assert.equal(sim0.metrics.prefix_cache_hits?.delta, cache.reported_cached_tokens);
  assert.equal(sim0.metrics.prefix_cache_queries?.delta, cache.reported_prompt_tokens);
  assert.equal(sim0.metrics.preemptions?.delta, 0);
  const hit = sim0.metrics.prefix_cache_hit_rate;
  assert.ok(hit !== undefined && typeof hit.value === 'number' && hit.value > 0, 'the trace shares prefixes');
  assert.ok(Math.abs(hit.value - cache.reported_hit_ratio) < 1e-5);
  assert.match(
    outcome.consoleText,
    /^Server metrics: http:\/\/127\.0\.0\.1:\d+\/metrics: \d+ scrapes, KV-cache usage avg/m,
  );
  // Raw samples on the records' clock: scrapes before the first request and after the last.
  const scrapes = epochNs(readFileSync(join(dir, 'server_metrics_export.jsonl'), 'utf8'), 'timestamp_ns');
  const records = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8');
  const starts = epochNs(records, 'request_start_ns');
  const ends = epochNs(records, 'request_end_ns');
  assert.equal(scrapes.length, sim0.scrapes);
  const ascending = (list: bigint[]): bigint[] => [...list].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  assert.ok((scrapes[0] as bigint) < (ascending(starts)[0] as bigint));
  assert.ok((scrapes[scrapes.length - 1] as bigint) > (ascending(ends).pop() as bigint));
  const exported = JSON.parse(readFileSync(join(dir, 'server_metrics_export.json'), 'utf8'));
  assert.equal(exported.metrics['vllm:kv_cache_usage_perc'].type, 'gauge');
  assert.equal(exported.metrics['vllm:prompt_tokens'].series[0].stats.total, cache.reported_prompt_tokens);
  const csv = readFileSync(join(dir, 'server_metrics_export.csv'), 'utf8');
  assert.match(csv, /^Endpoint,Type,Metric,Unit,avg,min,max,std,/m);
  assert.match(csv, /^Endpoint,Type,Metric,Unit,total,rate,resets,/m);
  const report = readFileSync(join(dir, 'report.html'), 'utf8');
  for (const id of ['server-requests-over-time', 'server-kv-cache-over-time', 'server-tokens-over-time'])
    assert.ok(report.includes(`id="chart-${id}"`), id);
  assert.ok(report.includes('<section id="server-metrics">'));
  // The end-of-run list of exports names the three files, each where it was written.
  const listed: Array<[string, string]> = [
    ['Server Metrics JSON Export', 'server_metrics_export.json'],
    ['Server Metrics CSV Export', 'server_metrics_export.csv'],
    ['Server Metrics JSONL Export', 'server_metrics_export.jsonl'],
  ];
  for (const [label, file] of listed)
    assert.ok(outcome.consoleText.includes(`\n${label}: ${join(dir, file)}\n`), label);
});

/** A fake SGLang `/metrics`: scrape number `n` (from 1), and seconds since its second scrape. */
function sglangText(n: number, sinceMarkS: number): string {
  const reset = sinceMarkS >= 1;
  const gen = reset ? 30 + 100 * (n - resetAt) : 1000 + 100 * n;
  return [
    '# HELP sglang:num_running_reqs The number of running requests.',
    '# TYPE sglang:num_running_reqs gauge',
    'sglang:num_running_reqs{model_name="m",tp_rank="0"} 3',
    'sglang:num_running_reqs{model_name="m",tp_rank="1"} 4',
    '# TYPE sglang:token_usage gauge',
    'sglang:token_usage{model_name="m",tp_rank="0"} 0.25',
    'sglang:token_usage{model_name="m",tp_rank="1"}\t0.75',
    '# TYPE sglang:cache_hit_rate gauge',
    'sglang:cache_hit_rate{model_name="m"} NaN',
    // Served only on even scrapes: a series that comes and goes.
    ...(n % 2 === 0 ? ['# TYPE sglang:num_queue_reqs gauge', 'sglang:num_queue_reqs{model_name="m"} 2'] : []),
    '# TYPE sglang:prompt_tokens_total counter',
    `sglang:prompt_tokens_total{model_name="m"} ${100 * n}`,
    '# TYPE sglang:cached_tokens_total counter',
    `sglang:cached_tokens_total{model_name="m",cache_source="device"} ${10 * n}`,
    `sglang:cached_tokens_total{model_name="m",cache_source="host",} ${5 * n}`,
    '# TYPE sglang:generation_tokens_total counter',
    `sglang:generation_tokens_total{model_name="m"} ${gen} 1700000000000`,
    '# HELP sglang:time_to_first_token_seconds Histogram of time to first token in seconds.',
    '# TYPE sglang:time_to_first_token_seconds histogram',
    `sglang:time_to_first_token_seconds_bucket{le="0.1",model_name="m"} ${n}`,
    `sglang:time_to_first_token_seconds_bucket{model_name="m",le="1.0"} ${3 * n}`,
    `sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} ${4 * n}`,
    `sglang:time_to_first_token_seconds_sum{model_name="m"} ${2 * n}`,
    `sglang:time_to_first_token_seconds_count{model_name="m"} ${4 * n}`,
    '# TYPE sglang:eplb_balancedness summary',
    'sglang:eplb_balancedness{quantile="0.5"} 1',
    '# An untyped family with escaped label values',
    'sglang:build_info{version="0.5 \\"rc\\"",path="C:\\\\srv",note="a}b,c\\nd"} 1',
    '',
  ].join('\n');
}
let resetAt = 0;

function fakeMetricsServer(): Promise<{ server: Server; url: string }> {
  let scrapes = 0;
  let markAt: number | null = null;
  const server = createServer((req, res) => {
    if (req.url === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
      return;
    }
    if (req.url !== '/metrics') {
      res.writeHead(404).end('no');
      return;
    }
    scrapes++;
    if (scrapes === 2) markAt = performance.now();
    const since = markAt === null ? 0 : (performance.now() - markAt) / 1000;
    if (since >= 1 && resetAt === 0) resetAt = scrapes;
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(sglangText(scrapes, since));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

test('an SGLang endpoint: its names, summed and averaged label sets, a counter reset, a histogram, escapes; endpoints without metrics warn once each', async () => {
  const fake = await fakeMetricsServer();
  try {
    const { dir, summary, warnings } = await replay({
      serverMetrics: [`${fake.url}/metrics`, `${fake.url}/nothing`, `${fake.url}/json`],
    });
    assert.equal(warnings.length, 2, warnings.join('\n'));
    assert.match(
      warnings[0] as string,
      /^server metrics: http:\/\/127\.0\.0\.1:\d+\/nothing answered HTTP 404; the run goes on/,
    );
    assert.match(warnings[1] as string, /\/json answered application\/json, not Prometheus text/);
    const endpoints = summary.server_metrics?.endpoints ?? [];
    assert.deepEqual(
      endpoints.map((e) => [e.status, e.server]),
      [
        ['ok', 'vllm'],
        ['ok', 'sglang'],
        ['unavailable', null],
        ['unavailable', null],
      ],
    );
    const sg = endpoints[1] as EndpointSection;
    assert.deepEqual(
      sg.missing,
      ['server_cache_hit_rate', 'prefix_cache_queries', 'preemptions'],
      'NaN is no value',
    );
    const m = sg.metrics;
    assert.deepEqual([m.running_requests?.min, m.running_requests?.max], [7, 7], 'tp ranks summed');
    assert.deepEqual([m.kv_cache_usage?.min, m.kv_cache_usage?.max], [0.5, 0.5], 'a usage ratio averaged');
    assert.equal(m.waiting_requests?.min, 2);
    const gen = m.generation_tokens as Entry;
    assert.equal(gen.resets, 1);
    assert.equal(
      gen.delta,
      100 * ((gen.samples as number) - 2) + 30,
      'after the reset, the new value is the increase',
    );
    assert.deepEqual(
      [
        m.prefix_cache_hit_rate?.value,
        m.prefix_cache_hit_rate?.hits_source,
        m.prefix_cache_hit_rate?.queries_source,
      ],
      [0.15, 'sglang:cached_tokens', 'sglang:prompt_tokens'],
    );
    const exported = JSON.parse(readFileSync(join(dir, 'server_metrics_export.json'), 'utf8'));
    const ttft = exported.metrics['sglang:time_to_first_token_seconds'];
    assert.equal(ttft.type, 'histogram');
    assert.equal(ttft.description, 'Histogram of time to first token in seconds.');
    const stats = ttft.series[0].stats;
    assert.deepEqual([stats.avg, stats.p50_estimate, stats.p99_estimate], [0.5, 0.55, 1]);
    assert.deepEqual(exported.metrics['sglang:build_info'].series[0].labels, {
      version: '0.5 "rc"',
      path: 'C:\\srv',
      note: 'a}b,c\nd',
    });
    assert.equal(exported.metrics['sglang:eplb_balancedness'], undefined, 'summaries are not exported');
    assert.match(
      readFileSync(join(dir, 'server_metrics_export.csv'), 'utf8'),
      /^Endpoint,Metric,Key,Value,Description$/m,
    );
  } finally {
    fake.server.close();
  }
});

test('--no-server-metrics: no scraping, no section, no files', async () => {
  const { dir, summary, outcome } = await replay({ serverMetrics: false, synthesisSpeedupRatio: 1000 });
  assert.equal(summary.server_metrics, undefined);
  assert.doesNotMatch(outcome.consoleText, /Server metrics:|Server Metrics \w+ Export/);
  for (const f of ['server_metrics_export.jsonl', 'server_metrics_export.json', 'server_metrics_export.csv'])
    assert.equal(existsSync(join(dir, f)), false, f);
});

/** Runs the CLI in this process; what it wrote to stderr. */
const cli = runCliInProcess;

test('the CLI: --server-metrics takes URLs until the next flag (http:// and /metrics implied), a bad one is a usage error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-server-metrics-cli-'));
  dirs.push(dir);
  const common = [
    'profile',
    '-m',
    'Qwen/Qwen3-0.6B',
    '--url',
    sim.url,
    '--ui',
    'none',
    '--client-warmup-ms',
    '0',
  ];
  const ok = await cli([
    ...common,
    '--server-metrics',
    '127.0.0.1:9',
    `${sim.url}/metrics/`,
    '--request-count',
    '1',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(
    ok.stderr,
    /server metrics: http:\/\/127\.0\.0\.1:9\/metrics not reachable: connect ECONNREFUSED/,
  );
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
  assert.deepEqual(summary.tokenload_config.serverMetrics, [
    'http://127.0.0.1:9/metrics',
    `${sim.url}/metrics`,
  ]);
  assert.deepEqual(
    summary.server_metrics.endpoints.map((e: EndpointSection) => [e.url, e.status]),
    [
      [`${sim.url}/metrics`, 'ok'],
      ['http://127.0.0.1:9/metrics', 'unavailable'],
    ],
  );
  const bad = await cli([...common, '--server-metrics', 'ftp://x', '--artifact-dir', dir]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--server-metrics.*only http:\/\/ and https:\/\/ are supported, got "ftp:"/);
});

test("server-metrics.md's --server-metrics-formats: the files named are kept, the others not written; parquet refused", async () => {
  const common = [
    'profile',
    '-m',
    'Qwen/Qwen3-0.6B',
    '--url',
    sim.url,
    '--ui',
    'none',
    '--request-count',
    '2',
    // The files written are the point, not times: no client warm-up (up to 5 s a run).
    '--client-warmup-ms',
    '0',
  ];
  const files = ['server_metrics_export.json', 'server_metrics_export.csv', 'server_metrics_export.jsonl'];
  const kept = (dir: string) => files.filter((f) => existsSync(join(dir, f)));
  for (const [formats, expected] of [
    [['json', 'csv'], files.slice(0, 2)],
    [['json', 'csv', 'jsonl'], files],
    [['jsonl'], files.slice(2)],
  ] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'tokenload-server-metrics-formats-'));
    dirs.push(dir);
    // AIPerf's form: several values after one flag.
    const r = await cli([...common, '--server-metrics-formats', ...formats, '--artifact-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(kept(dir), expected, formats.join(' '));
    assert.ok(existsSync(join(dir, 'server_metrics_metadata.json')));
  }
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-server-metrics-formats-'));
  dirs.push(dir);
  const refused = await cli([
    ...common,
    '--server-metrics-formats',
    'json',
    'csv',
    'parquet',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /--server-metrics-formats parquet is AIPerf's option; tokenload does not take it: tokenload writes no Parquet/,
  );
  assert.deepEqual(kept(dir), []);
});
