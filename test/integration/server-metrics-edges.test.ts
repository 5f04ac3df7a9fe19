/**
 * Issue 28 scope 6, through `runProfile` against loopback servers: `/metrics` edge cases read back
 * from the summary's `server_metrics` section, `server_metrics_export.json` and the console. A
 * counter's `_created` time is not one of its values (OpenMetrics' sample and `prometheus_client`'s
 * gauge); a family switched off (absent, or declared without samples) is missing, not 0; the label
 * sets of one family stay apart in the export while the summary sums a counter by each label set's
 * own increases (a label set absent from a scrape is no reset; one label set's restart is counted
 * once, the others' increases kept); a server whose `/metrics` answers 404 gets one line and no
 * empty `server_metrics_export.*` files; one that answers 401 is said to ask for credentials, and
 * whether the run's were sent.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';

interface Entry {
  kind: string;
  source?: string;
  samples?: number;
  min?: number | null;
  max?: number | null;
  delta?: number;
  resets?: number;
}

interface EndpointSection {
  url: string;
  status: string;
  reason: string | null;
  metrics: Record<string, Entry>;
  missing: string[];
}

let sim: RunningSimulator;
const dirs: string[] = [];
const servers: Server[] = [];
before(async () => {
  sim = await startSimulator({ mode: 'engine', models: ['Qwen/Qwen3-0.6B'] });
});
after(async () => {
  for (const s of servers) s.close();
  await sim.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function replay(over: Partial<ProfileConfigInput>) {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-metrics-edges-'));
  dirs.push(dir);
  const warnings: string[] = [];
  const outcome = await runProfile(
    profileConfig({
      models: ['Qwen/Qwen3-0.6B'],
      url: sim.url,
      streaming: true,
      inputFile: 'examples/traces/bailian_traceA_multiturn_head40.jsonl',
      customDatasetType: 'bailian_trace',
      synthesisSpeedupRatio: 100,
      randomSeed: 11,
      serverMetricsIntervalMs: 200,
      artifactDir: dir,
      ui: 'none',
      clientWarmupMs: 0,
      commandLine: 'server metrics edges test',
      ...over,
    }),
    {
      log: { info: () => undefined, warn: (m) => warnings.push(m) },
      stopSignal: new AbortController().signal,
    },
  );
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
  return { dir, outcome, summary, warnings };
}

function listen(server: Server): Promise<string> {
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

/**
 * A vLLM-like `/metrics`, scrape `n` (from 1), `reset` once 1 s has passed since the second scrape
 * (the profiling phase's): two engines; engine 1's prompt-token counter only on odd scrapes;
 * engine 0's preemption counter restarting while engine 1's grows; `_created` in both layouts; the
 * KV-cache gauge declared without samples, the waiting-requests gauge never served.
 */
function vllmText(n: number, resetAt: number | null): string {
  const preempt0 = resetAt === null ? 500 + 2 * n : 2 * (n - resetAt) + 1;
  return [
    '# HELP vllm:num_requests_running Number of requests in model execution batches.',
    '# TYPE vllm:num_requests_running gauge',
    'vllm:num_requests_running{engine="0",model_name="m"} 2.0',
    'vllm:num_requests_running{engine="1",model_name="m"} 5.0',
    '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.',
    '# TYPE vllm:kv_cache_usage_perc gauge',
    // prometheus_client's text format: the counter, then its creation time as a gauge of its own.
    '# HELP vllm:prompt_tokens_total Number of prefill tokens processed.',
    '# TYPE vllm:prompt_tokens_total counter',
    `vllm:prompt_tokens_total{engine="0",model_name="m"} ${100 * n}.0`,
    ...(n % 2 === 1 ? ['vllm:prompt_tokens_total{engine="1",model_name="m"} 1000.0'] : []),
    '# HELP vllm:prompt_tokens_created Number of prefill tokens processed.',
    '# TYPE vllm:prompt_tokens_created gauge',
    'vllm:prompt_tokens_created{engine="0",model_name="m"} 1.7644e+09',
    'vllm:prompt_tokens_created{engine="1",model_name="m"} 1.7644e+09',
    // OpenMetrics: the family without _total, its samples _total and _created.
    '# TYPE vllm:generation_tokens counter',
    `vllm:generation_tokens_total{engine="0",model_name="m"} ${10 * n}`,
    'vllm:generation_tokens_created{engine="0",model_name="m"} 1.7644e+09',
    '# TYPE vllm:num_preemptions counter',
    `vllm:num_preemptions_total{engine="0",model_name="m"} ${preempt0}`,
    `vllm:num_preemptions_total{engine="1",model_name="m"} ${3 * n}`,
    'vllm:num_preemptions_created{engine="0",model_name="m"} 1.7644e+09',
    'vllm:num_preemptions_created{engine="1",model_name="m"} 1.7644e+09',
    '# EOF',
    '',
  ].join('\n');
}

function fakeVllmMetrics(): Server {
  let scrapes = 0;
  let markAt: number | null = null;
  let resetAt: number | null = null;
  return createServer((_req, res) => {
    scrapes++;
    if (scrapes === 2) markAt = performance.now();
    if (resetAt === null && markAt !== null && performance.now() - markAt >= 1000) resetAt = scrapes;
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(vllmText(scrapes, resetAt));
  });
}

test('a vLLM-like /metrics: _created is no value, switched-off families missing, label sets apart in the export, counters summed by their own increases', async () => {
  const url = `${await listen(fakeVllmMetrics())}/metrics`;
  const { dir, outcome, summary, warnings } = await replay({ serverMetrics: [url] });
  assert.deepEqual(warnings, []);
  const fake = (summary.server_metrics.endpoints as EndpointSection[]).find((e) => e.url === url);
  assert.ok(fake !== undefined && fake.status === 'ok');
  // Absent is not zero: neither the family declared without samples nor the one never served.
  assert.ok(fake.missing.includes('kv_cache_usage') && fake.missing.includes('waiting_requests'));
  assert.equal(fake.metrics.kv_cache_usage, undefined);
  const line = outcome.consoleText.split('\n').find((l) => l.startsWith('Server metrics:')) as string;
  assert.match(line, new RegExp(`${url}: \\d+ scrapes(;|$)`), 'no KV-cache figure for the endpoint');
  // The summary sums the engines (docs/server-metrics.md).
  const running = fake.metrics.running_requests as Entry;
  assert.deepEqual([running.min, running.max], [7, 7]);
  // Engine 1's prompt tokens come and go (constant when there): no reset, only engine 0's increase.
  const prompt = fake.metrics.prompt_tokens as Entry;
  assert.equal(prompt.source, 'vllm:prompt_tokens');
  assert.deepEqual([prompt.resets, prompt.delta], [0, 100 * ((prompt.samples as number) - 1)]);
  const gen = fake.metrics.generation_tokens as Entry;
  assert.deepEqual([gen.resets, gen.delta], [0, 10 * ((gen.samples as number) - 1)]);
  // Engine 0 restarts once while engine 1 keeps counting: one reset, both engines' increases.
  const pre = fake.metrics.preemptions as Entry;
  const steps = (pre.samples as number) - 1;
  assert.equal(pre.resets, 1);
  assert.equal(pre.delta, 3 * steps + 2 * (steps - 1) + 1);
  // The export keeps every label set apart, and no _created family.
  const exported = JSON.parse(readFileSync(join(dir, 'server_metrics_export.json'), 'utf8'));
  const names = Object.keys(exported.metrics);
  assert.deepEqual(
    names.filter((n) => n.endsWith('_created')),
    [],
    'a _created time is not exported',
  );
  const kvSeries = exported.metrics['vllm:kv_cache_usage_perc'].series as Array<{ endpoint_url: string }>;
  assert.deepEqual(
    kvSeries.filter((s) => s.endpoint_url === url),
    [],
    "only the simulator's KV-cache gauge",
  );
  const own = (name: string) =>
    (
      exported.metrics[name].series as Array<{
        endpoint_url: string;
        labels: { engine: string };
        stats: Record<string, number>;
      }>
    )
      .filter((s) => s.endpoint_url === url)
      .map((s) => [s.labels.engine, s.stats]);
  const runningSeries = own('vllm:num_requests_running');
  assert.deepEqual(
    runningSeries.map(([engine, stats]) => [engine, (stats as Record<string, number>).avg]),
    [
      ['0', 2],
      ['1', 5],
    ],
  );
  const promptSeries = own('vllm:prompt_tokens');
  assert.deepEqual(
    promptSeries.map(([engine, stats]) => [engine, (stats as Record<string, number>).total]),
    [
      ['0', prompt.delta],
      ['1', 0],
    ],
  );
  const preSeries = own('vllm:num_preemptions');
  assert.deepEqual(
    preSeries.map(([engine, stats]) => [engine, (stats as Record<string, number>).resets]),
    [
      ['0', 1],
      ['1', 0],
    ],
  );
});

/** A pass-through to the simulator whose `/metrics` answers `status` (404 by default). */
function noMetricsProxy(target: string, status = 404): Server {
  const to = new URL(target);
  return createServer((req, res) => {
    if (req.url === '/metrics') {
      res.writeHead(status, { 'content-type': 'text/plain' }).end(`${status}`);
      return;
    }
    const upstream = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
}

test('a server whose /metrics answers 404: one line saying so, no server_metrics_export.* files, none listed', async () => {
  const url = await listen(noMetricsProxy(sim.url));
  const { dir, outcome, summary, warnings } = await replay({ url, synthesisSpeedupRatio: 1000 });
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(
    warnings[0] as string,
    /^server metrics: http:\/\/127\.0\.0\.1:\d+\/metrics answered HTTP 404/,
  );
  const [endpoint] = summary.server_metrics.endpoints as EndpointSection[];
  assert.deepEqual([endpoint?.status, endpoint?.reason], ['unavailable', 'answered HTTP 404']);
  const lines = outcome.consoleText.split('\n').filter((l) => l.includes('/metrics'));
  assert.deepEqual(lines, [`Server metrics: ${url}/metrics unavailable (answered HTTP 404)`]);
  assert.doesNotMatch(outcome.consoleText, /Server Metrics \w+ Export/);
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith('server_metrics')),
    [],
    'no server-metrics file is written',
  );
  assert.ok(existsSync(join(dir, 'profile_export.jsonl')), 'the run itself went on');
});

test("a server whose /metrics answers 401: the reason says it asks for credentials, and whether the run's -H / --api-key went", async () => {
  const url = await listen(noMetricsProxy(sim.url, 401));
  const small = {
    url,
    inputFile: undefined,
    customDatasetType: undefined,
    synthesisSpeedupRatio: undefined,
    synthetic: { isl: 16, osl: 2 },
    requestCount: 2,
    concurrency: 1,
  };
  for (const [over, reason] of [
    [
      {},
      "answered HTTP 401: it asks for credentials and none were given (-H or --api-key, sent to a metrics URL on a --url server's host)",
    ],
    [{ apiKey: 'k' }, "answered HTTP 401: it refused the credentials sent (the run's -H and --api-key)"],
  ] as const) {
    const { outcome, summary, warnings } = await replay({ ...small, ...over });
    assert.deepEqual(warnings, [
      `server metrics: ${url}/metrics ${reason}; the run goes on without its metrics (--no-server-metrics skips scraping)`,
    ]);
    const [endpoint] = summary.server_metrics.endpoints as EndpointSection[];
    assert.equal(endpoint?.reason, reason);
    assert.ok(outcome.consoleText.includes(`Server metrics: ${url}/metrics unavailable (${reason})`));
  }
});
