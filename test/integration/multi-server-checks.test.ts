/**
 * Several servers, checked one by one: replicas that template prompts differently (ChatML's 8 tokens
 * for one user message against none) each learn their own overhead in `usage_check`, each
 * server's entry in `servers` carries its own prefix-cache and stream-integrity figures, and a
 * run-level stream-integrity warning names the server its requests came from, through the built CLI.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { CacheCheckSummary } from '../../src/metrics/cache-check.js';
import type { StreamIntegritySummary } from '../../src/metrics/stream-integrity-check.js';
import type { UsageCheckSummary } from '../../src/metrics/usage-check.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { loadFixtures, startFixturePlayer } from '../helpers/fixture-player.js';

let templated: RunningSimulator;
let plain: RunningSimulator;

before(async () => {
  [templated, plain] = await Promise.all([
    startSimulator({ mode: 'fixed', ttftMs: 2, itlMs: 1, chatTemplate: 'chatml' }),
    startSimulator({ mode: 'fixed', ttftMs: 2, itlMs: 1 }),
  ]);
});

after(async () => {
  await Promise.all([templated?.close(), plain?.close()]);
});

interface Summary {
  usage_check: UsageCheckSummary;
  warnings: string[];
  servers: Array<{
    url: string;
    request_count: number;
    cache_check?: CacheCheckSummary;
    stream_integrity: StreamIntegritySummary;
    error_summary?: Array<{ code: number; type: string; count: number }>;
  }>;
}

test('two replicas with different chat templates: each learns its own overhead, and each reports its own cache figures', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-server-checks-'));
  const r = await runCliProcess([
    'profile',
    '-m',
    'Qwen/Qwen3-0.6B',
    '--endpoint-type',
    'chat',
    '--streaming',
    '--url',
    templated.url,
    '--url',
    plain.url,
    '--input-file',
    'examples/traces/bailian_traceA_multiturn_head40.jsonl',
    '--custom-dataset-type',
    'bailian_trace',
    '--fixed-schedule',
    '--synthesis-speedup-ratio',
    '100',
    '--client-warmup-ms',
    '0',
    '--ui',
    'none',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
  const learned = new Map(summary.usage_check.per_layout.map((l) => [l.server, l.overhead_tokens]));
  // ChatML wraps one user message in 5 tokens and opens the assistant turn with 3.
  assert.equal(learned.get(templated.url), 8, JSON.stringify(summary.usage_check));
  assert.equal(learned.get(plain.url), 0, JSON.stringify(summary.usage_check));
  assert.equal(summary.usage_check.discrepant, 0);
  assert.match(
    r.stdout,
    new RegExp(
      `Usage check: chat template overhead learned from usage\\.prompt_tokens: .*8 tokens for user×1 at ${templated.url.replaceAll('.', '\\.')} .*0 tokens for user×1 at ${plain.url.replaceAll('.', '\\.')} .*disagree with their server's`,
    ),
  );
  for (const server of summary.servers) {
    const cache = server.cache_check;
    assert.ok(cache !== undefined, `${server.url}: cache_check`);
    assert.equal(cache.requests_with_ideal, server.request_count, server.url);
    assert.equal(cache.requests_reported, server.request_count, server.url);
    assert.ok(r.stdout.includes(`Server ${server.url}: `), r.stdout);
  }
  const perServer = summary.servers.reduce((n, s) => n + (s.cache_check?.requests_reported ?? 0), 0);
  assert.equal(perServer, 40, 'every request of the trace counted on its own server');
});

test('one replica that templates and one that does not, read as one server, would hide both: the run keeps them apart', async () => {
  // The same overheads, folded together, are 8 and 0 tokens around a median of 8 or 0: within
  // max(10 %, 8 tokens) of either, so a single figure would report no disagreement and a wrong
  // overhead for one of them. Per server, neither request disagrees with its own server's figure.
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-server-checks-'));
  const r = await runCliProcess([
    'profile',
    '-m',
    'Qwen/Qwen3-0.6B',
    '--endpoint-type',
    'chat',
    '--url',
    `${templated.url},${plain.url}`,
    '--synthetic-input-tokens-mean',
    '40',
    '--output-tokens-mean',
    '2',
    '--request-count',
    '12',
    '--concurrency',
    '2',
    '--client-warmup-ms',
    '0',
    '--ui',
    'none',
    '--artifact-dir',
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
  const byServer = summary.usage_check.per_layout.map((l) => [l.server, l.overhead_tokens, l.requests]);
  assert.deepEqual(
    byServer.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    [
      [templated.url, 8, 6],
      [plain.url, 0, 6],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );
});

/**
 * `profile` through the built CLI against the plain simulator and `other` (a fixture player), 6
 * requests at concurrency 2 (3 sessions each): the run's folder and its exit.
 */
async function againstPlainAnd(other: string) {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-server-checks-'));
  const r = await runCliProcess([
    ...['profile', '-m', 'Qwen/Qwen3-8B', '--tokenizer', 'builtin', '--endpoint-type', 'chat', '--streaming'],
    ...['--url', plain.url, '--url', other, '--request-count', '6', '--concurrency', '2'],
    ...['--client-warmup-ms', '0', '--ui', 'none', '--artifact-dir', dir],
  ]);
  return { dir, r };
}

test('a replica whose streams are cumulative is named by its own stream-integrity counts', async () => {
  const cumulative = loadFixtures().filter((f) => f.name === 'b37-cumulative-text-chunks');
  assert.equal(cumulative.length, 1);
  const player = await startFixturePlayer(cumulative);
  try {
    const { dir, r } = await againstPlainAnd(player.origin);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
    const byUrl = new Map(summary.servers.map((s) => [s.url, s.stream_integrity]));
    assert.equal(byUrl.get(player.origin)?.cumulative, 3, JSON.stringify(summary.servers));
    assert.equal(byUrl.get(player.origin)?.requests, 3);
    assert.equal(byUrl.get(plain.url)?.cumulative, 0);
    assert.ok(r.stdout.includes(`Server ${player.origin}: 3 requests`), r.stdout);
    assert.match(
      r.stdout,
      new RegExp(`Server ${player.origin.replaceAll('.', '\\.')}: .*; stream: 3 cumulative`),
    );
    assert.doesNotMatch(r.stdout, new RegExp(`Server ${plain.url.replaceAll('.', '\\.')}: .*stream:`));
    // The run-level warning names the replica its cumulative requests came from, not the clean one.
    const warning = summary.warnings.filter((w) => w.includes('streamed cumulative text'));
    assert.equal(warning.length, 1, JSON.stringify(summary.warnings));
    assert.ok(
      warning[0]?.startsWith(`3 of 6 requests (all 3 from ${player.origin}) streamed cumulative text`),
      warning[0],
    );
    assert.ok(!warning[0]?.includes(plain.url), warning[0]);
    assert.ok(r.stdout.includes(`Warning: ${warning[0]}`), r.stdout);
  } finally {
    await player.close();
  }
});

test('a replica whose every request failed says why on its own line, and its entry carries its error summary', async () => {
  const refusing = loadFixtures().filter((f) => f.name === 'b21-http-429-retry-after');
  assert.equal(refusing.length, 1);
  const player = await startFixturePlayer(refusing);
  try {
    const { dir, r } = await againstPlainAnd(player.origin);
    const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
    const failing = summary.servers.find((s) => s.url === player.origin);
    assert.deepEqual(
      failing?.error_summary?.map((e) => [e.code, e.count]),
      [[429, 3]],
      JSON.stringify(summary.servers),
    );
    assert.equal(summary.servers.find((s) => s.url === plain.url)?.error_summary, undefined);
    const origin = player.origin.replaceAll('.', '\\.');
    assert.match(
      r.stdout,
      new RegExp(`Server ${origin}: 0 succeeded, 3 failed \\(.*\\(429\\) ×3\\) in 3 sessions`),
    );
    assert.match(
      r.stdout,
      new RegExp(`Server ${plain.url.replaceAll('.', '\\.')}: 3 requests in 3 sessions`),
    );
  } finally {
    await player.close();
  }
});
