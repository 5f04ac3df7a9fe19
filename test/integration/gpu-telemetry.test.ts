/**
 * Issue 28 scope 5, through the CLI against `--simulator`: `--gpu-telemetry URL` scrapes a loopback
 * DCGM exporter serving the recorded scrapes of test/fixtures/dcgm/ (two GPUs, values changing from
 * one scrape to the next) into `gpu_telemetry_export.jsonl`, `.json` and `.csv`, the summary's
 * `gpu_telemetry` section, a console line and the report's charts; AIPerf's default exporters
 * (`localhost:9400`, `:9401`), absent here, are tried without a warning; a bad value is refused.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'dcgm');
const SCRAPES = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.prom'))
  .sort()
  .map((f) => readFileSync(join(FIXTURES, f), 'utf8'));

/** The fixture's values per GPU, as written (DCGM's units), scrape by scrape. */
const RECORDED = {
  util: [
    [0, 38, 71, 66],
    [0, 22, 64, 59],
  ],
  fbUsedMiB: [
    [71523, 72611, 73705, 73705],
    [68210, 69984, 71240, 71240],
  ],
  energyMj: [
    [912345678901, 912346102233, 912346455870, 912346803116],
    [887654321098, 887654712340, 887655049517, 887655380894],
  ],
  smClockMhz: [1980, 1755],
};

const dirs: string[] = [];
const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A DCGM exporter on 127.0.0.1: the n-th GET of /metrics gets the n-th recorded scrape, then the last. */
function dcgmExporter(): Promise<string> {
  let n = 0;
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    const text = SCRAPES[Math.min(n++, SCRAPES.length - 1)] as string;
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
  });
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

const PROFILE = [
  'profile',
  '--simulator',
  '--simulator-option',
  'warmup-ms=0',
  '-m',
  'Qwen/Qwen3-0.6B',
  '--tokenizer',
  'builtin',
  '--streaming',
  '--isl',
  '64',
  '--osl',
  '24',
  '--ui',
  'none',
  '--client-warmup-ms',
  '0',
];

// biome-ignore lint/suspicious/noExplicitAny: parsed artifact JSON, checked key by key below
type Json = Record<string, any>;

/** `x` is one of `values` (floating-point products compared within 1e-9 relative). */
function oneOf(x: number, values: readonly number[], what: string): void {
  assert.ok(
    values.some((v) => Math.abs(v - x) <= 1e-9 * Math.max(1, Math.abs(v))),
    `${what}: ${x} not among ${values.join(', ')}`,
  );
}

test('--gpu-telemetry URL: per-GPU files, summary section, console line and charts from a DCGM exporter', async () => {
  const host = await dcgmExporter();
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-gpu-telemetry-'));
  dirs.push(dir);
  const run = await runCliInProcess([
    ...PROFILE,
    '--gpu-telemetry',
    host,
    '--concurrency',
    '2',
    '--osl',
    '48',
    '--request-count',
    '40',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(run.code, 0, run.stderr);
  const url = `http://${host}/metrics`;
  assert.doesNotMatch(
    run.stderr,
    /GPU telemetry: http:\/\/localhost/,
    'the absent defaults are not warned about',
  );

  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Json;
  const section = summary.gpu_telemetry as Json;
  assert.equal(section.interval_ms, 330, "AIPerf's interval");
  assert.deepEqual(
    section.endpoints.map((e: Json) => [e.url, e.status, e.default_url]),
    [
      ['http://localhost:9400/metrics', 'unavailable', true],
      ['http://localhost:9401/metrics', 'unavailable', true],
      [url, 'ok', false],
    ],
  );
  const ours = section.endpoints[2] as Json;
  const jsonl = readFileSync(join(dir, 'gpu_telemetry_export.jsonl'), 'utf8').trim().split('\n');
  assert.equal(jsonl.length, ours.scrapes, 'one JSONL line per scrape');
  assert.ok(ours.scrapes >= 3, 'scraped at the start, the profiling phase and its end');
  assert.deepEqual(
    ours.gpus.map((g: Json) => [g.index, g.uuid, g.name, g.hostname]),
    [
      [0, 'GPU-3b6f4c2e-9a51-7d08-c1e4-5f2a8b90d7c3', 'NVIDIA H100 80GB HBM3', 'dgx-h100-07'],
      [1, 'GPU-a87d1e05-62c9-4b3f-8e16-0d9c4f7ab218', 'NVIDIA H100 80GB HBM3', 'dgx-h100-07'],
    ],
  );

  const exported = JSON.parse(readFileSync(join(dir, 'gpu_telemetry_export.json'), 'utf8')) as Json;
  assert.deepEqual(exported.summary.endpoints_successful, [url]);
  assert.equal(exported.summary.endpoints_configured.length, 3);
  const gpus = exported.endpoints[host].gpus as Json;
  assert.deepEqual(Object.keys(gpus), ['gpu_0', 'gpu_1']);
  for (const i of [0, 1]) {
    const g = gpus[`gpu_${i}`] as Json;
    assert.deepEqual([g.gpu_index, g.platform], [i, 'nvidia']);
    const m = g.metrics as Json;
    const clock = RECORDED.smClockMhz[i] as number;
    assert.deepEqual(
      [m.nvidia_sm_clock.avg, m.nvidia_sm_clock.min, m.nvidia_sm_clock.max],
      [clock, clock, clock],
    );
    assert.equal(m.nvidia_sm_clock.unit, 'MHz');
    assert.ok(m.nvidia_sm_clock.count >= 1 && m.nvidia_sm_clock.count <= ours.scrapes);
    const util = RECORDED.util[i] as number[];
    oneOf(m.nvidia_gpu_utilization.min, util, `GPU ${i} utilization min`);
    oneOf(m.nvidia_gpu_utilization.max, util, `GPU ${i} utilization max`);
    assert.equal(m.nvidia_gpu_utilization.unit, '%');
    // Memory used in AIPerf's GB (MiB × 1.048576e-3).
    const usedGb = (RECORDED.fbUsedMiB[i] as number[]).map((v) => v * 1.048576e-3);
    oneOf(m.nvidia_memory_used.max, usedGb, `GPU ${i} memory used max`);
    assert.equal(m.nvidia_memory_used.unit, 'GB');
    // Energy: the counter's increase over the window, in MJ, between two recorded scrapes.
    const energy = RECORDED.energyMj[i] as number[];
    const increases = energy.flatMap((a, j) => energy.slice(j).map((b) => (b - a) * 1e-9));
    oneOf(m.nvidia_energy_consumption.total, increases, `GPU ${i} energy`);
    assert.deepEqual([m.nvidia_energy_consumption.unit, m.nvidia_energy_consumption.resets], ['MJ', 0]);
    // A field the exporter does not serve is absent, not 0.
    assert.equal(m.nvidia_power_violation, undefined);
    assert.equal(m.nvidia_sm_utilization.unit, '%');
  }

  const csv = readFileSync(join(dir, 'gpu_telemetry_export.csv'), 'utf8').trim().split('\n');
  assert.equal(
    csv[0],
    'Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std',
  );
  const smRows = csv.filter((l) => l.includes(',SM clock (MHz),'));
  assert.deepEqual(
    smRows.map((l) => l.split(',').slice(0, 9)),
    [
      [
        host,
        '0',
        'NVIDIA H100 80GB HBM3',
        'GPU-3b6f4c2e-9a51-7d08-c1e4-5f2a8b90d7c3',
        'nvidia',
        'SM clock (MHz)',
        '1980.00',
        '1980.00',
        '1980.00',
      ],
      [
        host,
        '1',
        'NVIDIA H100 80GB HBM3',
        'GPU-a87d1e05-62c9-4b3f-8e16-0d9c4f7ab218',
        'nvidia',
        'SM clock (MHz)',
        '1755.00',
        '1755.00',
        '1755.00',
      ],
    ],
  );

  const consoleText = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  assert.match(
    consoleText,
    new RegExp(
      `^GPU telemetry: http://${host.replace('.', '\\.')}/metrics: 2 GPUs, \\d+ scrapes; GPU 0 \\(NVIDIA H100 80GB HBM3\\): utilization avg [\\d.]+ %, max [\\d.]+ %, memory used max [\\d.]+ GB, power avg [\\d.]+ W, SM clock avg 1980 MHz; GPU 1 .*SM clock avg 1755 MHz$`,
      'm',
    ),
  );
  for (const [label, file] of [
    ['GPU Telemetry JSON Export', 'gpu_telemetry_export.json'],
    ['GPU Telemetry CSV Export', 'gpu_telemetry_export.csv'],
    ['GPU Telemetry JSONL Export', 'gpu_telemetry_export.jsonl'],
  ] as const)
    assert.ok(consoleText.includes(`\n${label}: ${join(dir, file)}\n`), label);
  const report = readFileSync(join(dir, 'report.html'), 'utf8');
  for (const id of ['gpu-utilization-over-time', 'gpu-power-over-time', 'gpu-memory-over-time'])
    assert.ok(report.includes(`id="chart-${id}"`), id);
  assert.ok(report.includes('<section id="gpu-telemetry">'), 'the per-GPU table');
  assert.ok(report.includes(`${url}: GPU 1 (NVIDIA H100 80GB HBM3)`));
});

test('--gpu-telemetry: a bad URL, dashboard or pynvml is a usage error naming the flag', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-gpu-telemetry-bad-'));
  dirs.push(dir);
  for (const [value, message] of [
    ['ftp://dcgm:9400', /--gpu-telemetry.*only http:\/\/ and https:\/\/ are supported, got "ftp:"/],
    [
      'http://user:pw@dcgm:9400',
      /--gpu-telemetry.*user:password@ is not taken\. -H and --api-key go to a metrics URL only on a --url server's host; tokenload sends no credentials to another host/,
    ],
    [
      'dashboard',
      /--gpu-telemetry dashboard is AIPerf's option; tokenload does not take it: AIPerf's live dashboard is not in tokenload/,
    ],
    [
      'pynvml',
      /--gpu-telemetry pynvml is AIPerf's option; tokenload does not take it: tokenload reads GPUs only/,
    ],
  ] as const) {
    const r = await runCliInProcess([
      ...PROFILE,
      '--gpu-telemetry',
      value,
      '--request-count',
      '1',
      '--artifact-dir',
      dir,
    ]);
    assert.equal(r.code, 2, `${value}: ${r.stderr}`);
    assert.match(r.stderr, message, value);
  }
});

test('--gpu-telemetry alone, no exporter at the defaults: one line saying so, no warning, no file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-gpu-telemetry-none-'));
  dirs.push(dir);
  const run = await runCliInProcess([
    ...PROFILE,
    '--gpu-telemetry',
    '--request-count',
    '2',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.doesNotMatch(
    run.stderr,
    /GPU telemetry: http/,
    'a default exporter that is not there is no warning',
  );
  const consoleText = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  assert.match(
    consoleText,
    /^GPU telemetry: no DCGM exporter answered \(http:\/\/localhost:9400\/metrics: .+; http:\/\/localhost:9401\/metrics: .+\)$/m,
  );
  assert.doesNotMatch(consoleText, /GPU Telemetry \w+ Export/);
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith('gpu_telemetry')),
    [],
  );
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Json;
  assert.deepEqual(
    summary.gpu_telemetry.endpoints.map((e: Json) => [e.status, e.default_url, e.gpus.length]),
    [
      ['unavailable', true, 0],
      ['unavailable', true, 0],
    ],
  );
});

test('--gpu-telemetry at a /metrics that is no DCGM exporter: the line asks whether it is one, and no header-only CSV', async () => {
  const server = createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
      .end('# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 0\n');
  });
  servers.push(server);
  const host = await new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-gpu-telemetry-not-dcgm-'));
  dirs.push(dir);
  const run = await runCliInProcess([
    ...PROFILE,
    '--gpu-telemetry',
    `http://${host}/metrics`,
    '--request-count',
    '2',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(run.code, 0, run.stderr);
  const consoleText = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  assert.match(
    consoleText,
    new RegExp(
      `^GPU telemetry: http://${host}/metrics answered \\d+ scrapes with no DCGM GPU series .*is it a DCGM exporter\\?`,
      'm',
    ),
  );
  assert.ok(!existsSync(join(dir, 'gpu_telemetry_export.csv')), 'no CSV of no GPU');
});

test('--gpu-telemetry at an exporter that asks for credentials, and at one not reachable: each reason says only what is so', async () => {
  const server = createServer((_req, res) => {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="dcgm"' }).end();
  });
  servers.push(server);
  const host = await new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-gpu-telemetry-401-'));
  dirs.push(dir);
  const run = await runCliInProcess([
    ...PROFILE,
    '--gpu-telemetry',
    host,
    '127.0.0.1:9',
    '--api-key',
    'secret-key',
    '--request-count',
    '2',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(run.code, 0, run.stderr);
  const asks = `http://${host}/metrics answered HTTP 401: it asks for credentials, which tokenload does not send to a metrics URL on another host (or port) than the --url servers (-H and --api-key go to those only)`;
  assert.ok(run.stderr.includes(`GPU telemetry: ${asks}; the run goes on`), run.stderr);
  assert.match(
    run.stderr,
    /GPU telemetry: http:\/\/127\.0\.0\.1:9\/metrics not reachable: connect ECONNREFUSED/,
  );
  const consoleText = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  const line = consoleText.split('\n').find((l) => l.startsWith('GPU telemetry:')) ?? '';
  assert.ok(
    line.includes(`http://${host}/metrics unavailable (answered HTTP 401: it asks for credentials`),
    line,
  );
  assert.match(line, /http:\/\/127\.0\.0\.1:9\/metrics unavailable \(not reachable: connect ECONNREFUSED/);
  assert.doesNotMatch(line, /secret-key/);
});
