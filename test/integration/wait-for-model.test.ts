/**
 * Issue 15 scope 4: `--wait-for-model-timeout` polls the server until it serves the model, with a
 * progress line, before the first measured request: a simulator that starts listening late, a
 * server whose `/v1/models` answers 503 before it lists the model, and one that never comes up
 * (the real binary exits 1, the unreachable code, naming the flag, the URL and the last answer).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { profileConfig } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { builtCli } from '../helpers/built-package.js';
import { freePort } from '../helpers/free-port.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-wait-'));
  dirs.push(dir);
  return dir;
}

async function run(over: Partial<ProfileConfigInput>) {
  const lines: string[] = [];
  const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) };
  const dir = tempDir();
  const outcome = await runProfile(
    profileConfig({
      models: ['m'],
      tokenizer: 'builtin',
      synthetic: { isl: 16, osl: 2, numDatasetEntries: 2 },
      requestCount: 2,
      concurrency: 1,
      clientWarmupMs: 0,
      serverMetrics: false,
      ui: 'none',
      artifactDir: dir,
      commandLine: 'wait test',
      ...over,
    }),
    { log, stopSignal: new AbortController().signal },
  );
  return { outcome, lines, dir };
}

test('a simulator that starts listening late: the run polls, says so, then measures', async () => {
  const port = await freePort();
  let sim: RunningSimulator | null = null;
  const late = setTimeout(async () => {
    sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1, port, models: ['m'] });
  }, 1500);
  try {
    const { outcome, lines } = await run({
      url: `http://127.0.0.1:${port}`,
      waitForModelTimeoutSeconds: 60,
      waitForModelIntervalSeconds: 0.2,
    });
    assert.equal(outcome.status.status, 'completed');
    assert.equal(outcome.summary.metrics.request_count?.avg, 2);
    const waiting = lines.filter((l) => l.startsWith('waiting for the server to serve m'));
    assert.ok(waiting.length >= 1, lines.join('\n'));
    assert.match(waiting[0] as string, /\(\d+\.\d s of 60 s\): http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
    assert.ok(
      lines.some((l) =>
        /^server ready after \d+\.\d s \(\d+ polls\): .*\/v1\/chat\/completions answered a 1-token request$/.test(
          l,
        ),
      ),
    );
  } finally {
    clearTimeout(late);
    await (sim as RunningSimulator | null)?.close();
  }
});

/** A server whose /v1/models answers 503 for its first `loading` polls, then lists `m`. */
async function loadingServer(loading: number) {
  let polls = 0;
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.url === '/v1/models') {
      polls++;
      if (polls <= loading) res.writeHead(503).end('loading');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"m"}]}');
      return;
    }
    // As vLLM: min_tokens above the max is a bad request.
    const sent = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    if (
      (sent.min_tokens ?? 0) > (sent.max_completion_tokens ?? sent.max_tokens ?? Number.POSITIVE_INFINITY)
    ) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":{"message":"min_tokens > max"}}');
      return;
    }
    const body = {
      id: 'x',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok ok' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 16, completion_tokens: 2, total_tokens: 18 },
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, polls: () => polls };
}

test('--wait-for-model-mode models: /v1/models answering 503, then listing the model', async () => {
  const fake = await loadingServer(3);
  try {
    const { outcome, lines } = await run({
      url: fake.url,
      waitForModelTimeoutSeconds: 30,
      waitForModelIntervalSeconds: 0.1,
      waitForModelMode: 'models',
    });
    assert.equal(outcome.status.status, 'completed');
    // 4 polls, then the one GET /v1/models every run sends each server before its first request.
    assert.equal(fake.polls(), 5);
    assert.match(lines.find((l) => l.startsWith('waiting')) ?? '', /\/v1\/models answered HTTP 503$/);
    assert.ok(
      lines.some((l) => /^server ready after .* \(4 polls\): .*\/v1\/models lists m$/.test(l)),
      lines.join('\n'),
    );
  } finally {
    fake.server.close();
  }
});

test('inference mode with --extra-inputs min_tokens: the 1-token poll drops it, so a vLLM-like server answers', async () => {
  const fake = await loadingServer(0);
  try {
    const { outcome } = await run({
      url: fake.url,
      waitForModelTimeoutSeconds: 5,
      waitForModelIntervalSeconds: 0.1,
      extraInputs: { min_tokens: 2, ignore_eos: true },
    });
    assert.equal(outcome.status.status, 'completed');
    assert.equal(outcome.summary.metrics.request_count?.avg, 2);
  } finally {
    fake.server.close();
  }
});

test('a server that never comes up: the binary exits 1 naming the flag, the URL and the last answer', async () => {
  const dir = tempDir();
  const child = spawn(
    process.execPath,
    [
      builtCli(),
      'profile',
      '-m',
      'm',
      '--tokenizer',
      'builtin',
      '--url',
      'http://127.0.0.1:9',
      '--wait-for-model-timeout',
      '1',
      '--wait-for-model-interval',
      '0.2',
      '--artifact-dir',
      dir,
      '--ui',
      'none',
      '--client-warmup-ms',
      '0',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 1, stderr);
  assert.match(
    stderr,
    /^error: --wait-for-model-timeout 1: http:\/\/127\.0\.0\.1:9 did not serve m within 1 s \(\d+ polls; last: http:\/\/127\.0\.0\.1:9: ECONNREFUSED/m,
  );
  assert.match(stderr, /waiting for the server to serve m \(0\.\d s of 1 s\)/);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
  assert.deepEqual([summary.run_status.status, summary.run_status.exit_code], ['failed', 1]);
});

test('--wait-for-model-mode and --wait-for-model-interval mean nothing without a timeout', () => {
  assert.throws(
    () => profileConfig({ models: ['m'], waitForModelMode: 'models' }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message === '--wait-for-model-mode has no effect without --wait-for-model-timeout > 0.',
  );
});

test('several --url: every server is waited for; the first that never comes up is named, the others counted', async () => {
  const ready = await loadingServer(0);
  const slow = await loadingServer(2);
  try {
    const both = await run({
      url: [ready.url, slow.url],
      waitForModelTimeoutSeconds: 30,
      waitForModelIntervalSeconds: 0.1,
      waitForModelMode: 'models',
    });
    assert.equal(both.outcome.status.status, 'completed');
    // The slow one was polled until it listed the model (2 × 503, then 200), then probed once.
    assert.equal(slow.polls(), 4);
    assert.equal(ready.polls(), 2);
    // One of two never comes up: it is named; two of three: the first is named, the other counted.
    const dead = `http://127.0.0.1:${await freePort()}`;
    const cases: Array<[string[], string | null]> = [
      [[ready.url, 'http://127.0.0.1:9'], null],
      [['http://127.0.0.1:9', ready.url, dead], ' (and 1 more of the 3 servers)'],
    ];
    for (const [url, more] of cases) {
      await assert.rejects(
        run({
          url,
          waitForModelTimeoutSeconds: 1,
          waitForModelIntervalSeconds: 0.2,
          waitForModelMode: 'models',
        }),
        (err: Error) =>
          err.name === 'ServerUnreachableError' &&
          err.message.startsWith(
            '--wait-for-model-timeout 1: http://127.0.0.1:9 did not serve m within 1 s',
          ) &&
          (more === null ? !err.message.includes('more of the') : err.message.endsWith(more)),
      );
    }
  } finally {
    ready.server.close();
    slow.server.close();
  }
});
