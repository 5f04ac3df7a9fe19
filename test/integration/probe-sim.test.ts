/**
 * `tokenload probe` against the built-in simulator in each of its habit and fault modes (the
 * options of src/simulator/options.ts and the x-sim-fault header of faults.ts): every habit the
 * probe can see changes its answer exactly where it should, every fault shows up as what a run would
 * record, and the rest of the findings stay those of the default mode. Then the CLI: table, `--json`,
 * `-o FILE`, an unreachable `--url`, a bad flag.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runProbe } from '../../src/probe/run-probe.js';
import type { FindingKey, ProbeFindings, ProbeReport } from '../../src/probe/types.js';
import { BUILTIN_TOKENIZER, loadTokenizer } from '../../src/prompt/tokenizer.js';
import type { SimulatorOptionsInput } from '../../src/simulator/options.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliProcess } from '../helpers/cli-process.js';

const MODEL = 'probe-model';
/** Loaded once for every simulator of this file. */
const TOKENIZER = loadTokenizer(BUILTIN_TOKENIZER);

/** The simulator of every mode: fast fixed timing, the model listed. */
const BASE: SimulatorOptionsInput = { mode: 'fixed', ttftMs: 2, itlMs: 0, models: [MODEL] };

async function probe(
  sim: SimulatorOptionsInput = {},
  input: Partial<Parameters<typeof runProbe>[0]> = {},
): Promise<ProbeReport> {
  const server = await startSimulator({ ...BASE, ...sim }, { tokenizer: TOKENIZER });
  try {
    return await runProbe({
      models: [MODEL],
      tokenizer: 'builtin',
      url: server.url,
      keepAliveIdleSeconds: 0.3,
      ...input,
    });
  } finally {
    await server.close();
  }
}

/** Each finding's value (what `--json` gives), by key. */
function values(r: ProbeReport): Record<string, unknown> {
  return Object.fromEntries(Object.entries(r.findings).map(([k, f]) => [k, f.value]));
}

const flags = (r: ProbeReport) => r.recommendations.map((x) => x.flag);

let base: ProbeReport;
before(async () => {
  base = await probe();
});

/** Asserts that `r` differs from the default mode in `changed` only, and returns its values. */
function onlyChanged(r: ProbeReport, changed: readonly FindingKey[]): Record<string, unknown> {
  const v = values(r);
  const b = values(base);
  for (const key of Object.keys(b) as FindingKey[]) {
    if (changed.includes(key)) assert.notDeepEqual(v[key], b[key], `${key} should differ`);
    else assert.deepEqual(v[key], b[key], `${key} should be the default mode's`);
  }
  return v;
}

test('default mode: an event stream, usage on its own chunk, running usage, no template, the routes', () => {
  const f: ProbeFindings = base.findings;
  assert.equal(f.streaming.value, 'event_stream');
  assert.equal(f.role_only_first_chunk.value, false);
  assert.deepEqual(f.usage.value, {
    present: true,
    placement: 'own_chunk_empty_choices',
    prompt_tokens: f.template_overhead.value?.client_tokens,
    completion_tokens: 16,
  });
  assert.equal(f.continuous_usage.value, 'running');
  assert.equal(f.reasoning_field.value, 'none');
  assert.deepEqual(f.tokens_per_chunk.value, { avg: 1, max: 1, source: 'running_usage' });
  assert.equal(f.tool_call_streaming.value, 'not_called');
  assert.equal(f.error_format.value?.status, 400);
  assert.equal(f.error_format.value?.in_band, false);
  assert.equal(f.error_format.value?.recorded_as?.kind, 'http_status');
  assert.equal(f.non_streamed_usage.value, true);
  assert.ok((f.prefix_cache_reporting.value?.cached_tokens ?? 0) > 0, f.prefix_cache_reporting.text);
  assert.equal(f.template_overhead.value?.overhead_tokens, 0);
  assert.deepEqual(f.models_route.value, { status: 200, listed: true, served: [MODEL] });
  assert.equal(f.metrics_route.value?.flavour, 'vllm');
  assert.equal(f.tokenize_route.value?.count, null);
  assert.equal(f.keep_alive.value?.header_timeout_s, 60);
  assert.equal(f.keep_alive.value?.closed_after_s, null);
  assert.deepEqual(flags(base), ['--streaming', '--per-chunk-usage']);
  assert.equal(base.requests.length, 8);
  assert.ok(
    base.requests
      .filter((q) => q.name !== 'bad request' && q.name !== 'tokenize')
      .every((q) => q.outcome === 'ok'),
  );
});

test('habit chat-template=chatml: overhead 8 instead of 0, --use-server-token-count and --apply-chat-template', async () => {
  const r = await probe({ chatTemplate: 'chatml' });
  const v = onlyChanged(r, ['usage', 'prefix_cache_reporting', 'template_overhead']);
  assert.equal((v.template_overhead as { overhead_tokens: number }).overhead_tokens, 8);
  assert.ok(flags(r).includes('--use-server-token-count'));
  assert.ok(!flags(base).includes('--use-server-token-count'));
  assert.ok(flags(r).includes('--apply-chat-template'));
  assert.ok(!flags(base).includes('--apply-chat-template'));
});

test('habit tokens-per-chunk=3: three tokens a chunk', async () => {
  const r = await probe({ tokensPerChunk: 3 });
  onlyChanged(r, ['tokens_per_chunk']);
  assert.equal(r.findings.tokens_per_chunk.value?.max, 3);
});

test('habit role-only-first-chunk: seen', async () => {
  const r = await probe({ roleOnlyFirstChunk: true });
  onlyChanged(r, ['role_only_first_chunk']);
  assert.equal(r.findings.role_only_first_chunk.value, true);
});

test('habit reasoning-tokens=4: the reasoning field is reasoning_content', async () => {
  const r = await probe({ reasoningTokens: 4 });
  onlyChanged(r, ['reasoning_field', 'usage']);
  assert.equal(r.findings.reasoning_field.value, 'reasoning_content');
});

test('habit prefix-cache off: 0 cached tokens reported on a repeated prompt', async () => {
  const r = await probe({ prefixCache: false });
  onlyChanged(r, ['prefix_cache_reporting']);
  assert.equal(r.findings.prefix_cache_reporting.value?.cached_tokens, 0);
});

test('mode engine: timing only, the probe sees the same endpoint', async () => {
  onlyChanged(await probe({ mode: 'engine' }), []);
});

test('another model served: not listed, every generation request 404, --model recommended', async () => {
  const r = await probe({ models: ['other'] });
  assert.deepEqual(r.findings.models_route.value, { status: 200, listed: false, served: ['other'] });
  assert.equal(r.findings.streaming.value, null);
  assert.ok(flags(r).includes('--model'));
});

test('x-sim-fault headers role-chunk and multi-token:4 (sent with -H) show as those habits', async () => {
  const role = await probe({}, { headers: { 'x-sim-fault': 'role-chunk' } });
  assert.equal(role.findings.role_only_first_chunk.value, true);
  const multi = await probe({}, { headers: { 'x-sim-fault': 'multi-token:4' } });
  assert.equal(multi.findings.tokens_per_chunk.value?.max, 4);
});

for (const [name, option, status] of [
  ['429', 'faultRate429', 429],
  ['500', 'faultRate500', 500],
  ['503', 'faultRate503', 503],
] as const) {
  test(`fault ${name}: every generation request answered ${status}, the finding says so`, async () => {
    const r = await probe({ [option]: 1 });
    assert.equal(r.findings.streaming.value, null);
    assert.match(r.findings.streaming.text, new RegExp(`http_status ${status}`));
    assert.equal(r.findings.usage.value, null);
    const generation = r.requests.filter(
      (q) => q.url.endsWith('/chat/completions') && q.name !== 'bad request',
    );
    assert.deepEqual(
      generation.map((q) => q.status),
      generation.map(() => status),
    );
    assert.ok(r.recommendations.some((x) => x.flag === null && x.reason.includes(`http_status ${status}`)));
    assert.ok(!flags(r).includes('--model'));
  });
}

for (const [name, option, kind] of [
  ['sse-error', 'faultRateSseError', 'in_band_error'],
  ['truncate', 'faultRateTruncate', 'stream_incomplete'],
  ['reset', 'faultRateReset', 'connection_reset'],
] as const) {
  test(`fault ${name}: the stream starts, then fails as a run records it (${kind}); absences are not findings`, async () => {
    const r = await probe({ [option]: 1 });
    assert.equal(r.findings.streaming.value, 'event_stream');
    assert.match(r.findings.streaming.text, new RegExp(`the stream failed: ${kind}`));
    assert.equal(r.findings.usage.value, null, 'no usage came, but the stream was cut before it could');
    assert.equal(r.findings.tool_call_streaming.value, null);
    assert.ok(!flags(r).includes('--tokenizer'));
    assert.match(r.requests.find((q) => q.name === 'stream')?.outcome ?? '', new RegExp(`^${kind} `));
  });
}

test('fault hang: the first generation request times out and the others are skipped', async () => {
  const r = await probe({ faultRateHang: 1 }, { timeoutSeconds: 0.5 });
  assert.equal(r.findings.streaming.value, null);
  assert.match(r.findings.streaming.text, /timeout 408/);
  assert.match(r.findings.error_format.text, /^skipped: the first generation request got no answer/);
  assert.deepEqual(
    r.requests.map((q) => q.name),
    ['models', 'metrics', 'tokenize', 'stream'],
  );
});

test('fault slow-headers: a late answer, the same endpoint', async () => {
  const r = await probe({ faultRateSlowHeaders: 1, slowHeadersMs: 50 });
  onlyChanged(r, []);
  assert.ok(r.requests.filter((q) => q.name === 'stream').every((q) => q.ms >= 50));
});

test('completions: the chat-only checks are n/a, the rest as chat', async () => {
  const r = await probe({}, { endpointType: 'completions' });
  assert.equal(r.findings.streaming.value, 'event_stream');
  assert.equal(r.findings.role_only_first_chunk.value, null);
  assert.equal(r.findings.tool_call_streaming.value, null);
  assert.equal(r.findings.usage.value?.placement, 'own_chunk_empty_choices');
  assert.equal(r.target.request_url.endsWith('/v1/completions'), true);
});

// ---- the CLI ----------------------------------------------------------------------------------

let sim: RunningSimulator;
const dirs: string[] = [];
before(async () => {
  sim = await startSimulator({ ...BASE, chatTemplate: 'chatml' }, { tokenizer: TOKENIZER });
});
after(async () => {
  await sim.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const cli = (args: string[]) => runCliProcess(['probe', ...args]);

test('CLI: a table of every finding and the recommended flags; --json and -o write the same JSON', async () => {
  const common = [
    '--url',
    sim.url,
    '-m',
    MODEL,
    '--tokenizer',
    'builtin',
    '--keep-alive-idle-seconds',
    '0.3',
  ];
  const table = await cli(common);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^tokenload \| Probe of http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/);
  assert.match(table.stdout, /│ template overhead +│ 8 tokens: the server counts \d+ prompt tokens/);
  assert.match(table.stdout, /^ {2}--use-server-token-count: /m);
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-probe-'));
  dirs.push(dir);
  const file = join(dir, 'probe.json');
  const json = await cli([...common, '--json', '-o', file]);
  assert.equal(json.code, 0, json.stderr);
  const printed = JSON.parse(json.stdout) as ProbeReport;
  const written = JSON.parse(readFileSync(file, 'utf8')) as ProbeReport;
  assert.deepEqual(printed.findings, written.findings);
  assert.equal(printed.findings.template_overhead.value?.overhead_tokens, 8);
  assert.deepEqual(Object.keys(printed), [
    'tokenload_version',
    'target',
    'findings',
    'recommendations',
    'requests',
    'duration_ms',
  ]);
});

test('CLI: nothing listening at --url exits 1 naming it; an unknown value exits 2', async () => {
  const down = await cli(['--url', 'http://127.0.0.1:9', '-m', MODEL, '--tokenizer', 'builtin']);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /^error: cannot reach http:\/\/127\.0\.0\.1:9/);
  const bad = await cli([
    '--url',
    sim.url,
    '-m',
    MODEL,
    '--tokenizer',
    'builtin',
    '--timeout-seconds',
    'soon',
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--timeout-seconds/);
});
