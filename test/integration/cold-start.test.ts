/**
 * A cold server's first wave is visible in the start-up split, through the built CLI: a loopback
 * stub answers its first four requests 1.5 s late (a cold engine's first batch) and every later one
 * at once. Without a warm-up, the console's `Start-up:` line names the first wave (the requests sent
 * before the first answer) and a warning says it was much slower than the rest and suggests
 * `--warmup-request-count`; with a warm-up, the warm-up met the slow requests and there is no note.
 * The simulator started with its own warm-up off (`warmup-ms=0`) shows its first wave the same way.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCliProcess } from '../helpers/cli-process.js';
import { chatChunk } from '../helpers/fixture-player.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const COLD_REQUESTS = 4;
const COLD_MS = 1500;

interface Summary {
  warnings: string[];
  start_up: { first_wave?: { requests: number; time_to_first_token_ms?: { p50: number } } };
  warmup_metrics?: { time_to_first_token: { max: number } };
}

/** A streaming chat server whose first {@link COLD_REQUESTS} answers wait {@link COLD_MS} ms. */
async function coldServer(): Promise<{ url: string; server: Server }> {
  let seen = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(req.url === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'cold-model', object: 'model' }] }));
      return;
    }
    req.resume();
    req.on('end', () => {
      const delayMs = seen++ < COLD_REQUESTS ? COLD_MS : 0;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      setTimeout(() => {
        res.end(`${chatChunk('warm')}${chatChunk(' enough')}${chatChunk(null, 'stop')}data: [DONE]\n\n`);
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function profileCold(extra: string[]) {
  const { url, server } = await coldServer();
  try {
    const dir = mkdtempSync(join(tmpdir(), 'tokenload-cold-'));
    const run = await runCliProcess([
      'profile',
      ...['--model', 'cold-model', '--tokenizer', 'builtin', '--url', url, '--streaming', '--ui', 'none'],
      ...['--client-warmup-ms', '0', '--no-server-metrics', '--artifact-dir', dir],
      ...['--concurrency', String(COLD_REQUESTS), '--benchmark-duration', '3', ...extra],
    ]);
    assert.equal(run.code, 0, run.stderr);
    const text = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
    return { text, summary: readRunArtifacts<Summary>(dir).summary };
  } finally {
    server.close();
  }
}

test('without a warm-up, the slow first wave is named on the Start-up line and noted', async () => {
  const { text, summary } = await profileCold([]);
  const wave = summary.start_up.first_wave;
  assert.equal(wave?.requests, COLD_REQUESTS, 'the four requests sent before the first answer');
  assert.ok((wave?.time_to_first_token_ms?.p50 ?? 0) >= COLD_MS, JSON.stringify(wave));
  assert.match(
    text,
    /^Start-up: .*; first wave: 4 requests before the first answer, TTFT p50 [\d.]+ \/ max/m,
  );
  const notes = summary.warnings.filter((w) => w.startsWith('the first wave'));
  assert.equal(notes.length, 1, JSON.stringify(summary.warnings));
  assert.match(notes[0] as string, /no warm-up ran against the server.*--warmup-request-count N/);
  assert.match(text, /^Warning: the first wave \(4 requests sent before the first answer\) had TTFT p50/m);
});

test('with a warm-up, the warm-up meets the cold requests and there is no note', async () => {
  const { text, summary } = await profileCold(['--warmup-request-count', String(COLD_REQUESTS)]);
  assert.ok(
    (summary.warmup_metrics?.time_to_first_token.max ?? 0) >= COLD_MS,
    'the warm-up met the cold answers',
  );
  assert.deepEqual(
    summary.warnings.filter((w) => w.startsWith('the first wave')),
    [],
  );
  assert.doesNotMatch(text, /^Warning: the first wave/m);
});

test('the simulator with its own warm-up off: the Start-up line names its first wave', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-cold-sim-'));
  const run = await runCliProcess([
    'profile',
    ...['--model', 'm', '--tokenizer', 'builtin', '--simulator', '--streaming', '--ui', 'none'],
    ...['--simulator-option', 'warmup-ms=0', '--simulator-option', 'mode=fixed'],
    ...['--client-warmup-ms', '0', '--no-server-metrics', '--artifact-dir', dir],
    ...['--concurrency', String(COLD_REQUESTS), '--request-count', '8'],
  ]);
  assert.equal(run.code, 0, run.stderr);
  const text = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  assert.match(
    text,
    /^Start-up: .*; first wave: 4 requests before the first answer, TTFT p50 [\d.]+ \/ max [\d.]+ ms$/m,
  );
  assert.equal(readRunArtifacts<Summary>(dir).summary.start_up.first_wave?.requests, COLD_REQUESTS);
});
