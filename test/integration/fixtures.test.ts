/**
 * Every SSE fixture, played by the loopback player and measured the way a user measures it:
 * `runProfile` (one request), then the exported `profile_export.jsonl` line and summary compared with
 * the fixture's `expect` (FORMAT.md §5). The handed fixtures (test/fixtures/sse, `b…`) and
 * tokenload's own (test/fixtures/sse-tokenload, `t…`: the classes behind the handed ones) run the
 * same way. A fixture that states `itlPerChunkUsageMs` runs twice: without `--per-chunk-usage`
 * (ITL must be AIPerf's `(latency − TTFT)/(OSL − 1)`, `itlMs`) and with it. A fixture whose server
 * reports its own timing (b39: llama.cpp `timings`) also has it recorded beside the client's numbers.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  chatChunk,
  type Fixture,
  type FixturePlayer,
  inlineFixture,
  loadFixtures,
  OWN_FIXTURE_DIR,
  startFixturePlayer,
} from '../helpers/fixture-player.js';
import {
  checkExpect,
  metric,
  type ProfileFixtureOptions,
  profileFixture,
} from '../helpers/fixture-profile.js';

const handed = loadFixtures();
const own = loadFixtures(OWN_FIXTURE_DIR);
let player: FixturePlayer;

const warmup = inlineFixture('warmup', {
  status: 200,
  headers: { 'content-type': 'text/event-stream' },
  writes: [{ atMs: 0, data: `${chatChunk('Hi')}${chatChunk(null, 'stop')}data: [DONE]\n\n` }],
  end: 'close',
});

before(async () => {
  player = await startFixturePlayer([...handed, ...own, warmup]);
  // The first run of a process pays one-off costs inside its first request (the garbage of the
  // tokenizer load collected, code compiled on first use); fixture runs turn the client warm-up
  // off to stay short, so one unmeasured run takes those costs here.
  await profileFixture(player, warmup);
});
after(async () => {
  await player.close();
});

/** Waits (bounded) until the socket that carried the fixture's last request has closed. */
async function requestSocketClosed(name: string): Promise<boolean> {
  const entry = player.log.findLast((logged) => logged.fixture === name);
  const deadline = performance.now() + 2000;
  while (entry !== undefined && !entry.socketClosed && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return entry?.socketClosed === true;
}

async function playOne(fixture: Fixture, options: ProfileFixtureOptions = {}): Promise<void> {
  const run = await profileFixture(player, fixture, options);
  checkExpect(fixture, run, player, options);
  if (fixture.clientTimeoutMs !== undefined || fixture.response.end === 'hang') {
    assert.ok(await requestSocketClosed(fixture.name), 'the timed-out socket was closed by the client');
  }
}

for (const [set, fixtures] of [
  ['handed', handed],
  ['tokenload', own],
] as const) {
  for (const fixture of fixtures) {
    test(`${set} fixture ${fixture.name} (${fixture.case})`, async () => {
      await playOne(fixture);
    });
    if (fixture.expect.itlPerChunkUsageMs !== undefined) {
      test(`${set} fixture ${fixture.name} with --per-chunk-usage`, async () => {
        await playOne(fixture, { perChunkUsage: true });
      });
    }
  }
}

test('fixture sets: all 27 handed fixtures are played, and tokenload’s own ones', () => {
  assert.equal(handed.length, 27);
  assert.ok(own.length > 0);
  for (const fixture of own) assert.match(fixture.name, /^t\d\d-/, 'own fixtures are named t<NN>-…');
});

test('--per-chunk-usage against a server without running usage: ITL falls back to OSL − 1, and says so', async () => {
  const fixture = handed.find((f) => f.name === 'b01-role-only-first-chunk') as Fixture;
  const run = await profileFixture(player, fixture, { perChunkUsage: true });
  checkExpect(fixture, run, player, { perChunkUsage: true });
  assert.ok(
    run.summary.warnings.some((w) => w.includes('--per-chunk-usage could not apply')),
    `warnings: ${JSON.stringify(run.summary.warnings)}`,
  );
});

test('b39: llama.cpp timings are kept beside the client’s numbers, never in their place', async () => {
  const fixture = handed.find((f) => f.name === 'b39-llamacpp-prompt-progress-timings') as Fixture;
  const run = await profileFixture(player, fixture);
  checkExpect(fixture, run, player);
  const { line, summary } = run;
  assert.equal(line.metadata.server_timing_source, 'llamacpp_timings');
  // The server's own figures, as its `timings` object gave them.
  assert.equal(metric(line, 'server_ttft_ms'), 452.4);
  assert.equal(metric(line, 'server_prefill_ms'), 452.4);
  assert.equal(metric(line, 'server_decode_ms'), 398.6);
  assert.equal(metric(line, 'server_cached_tokens'), 1536);
  assert.equal(metric(line, 'server_queue_ms'), undefined, 'llama.cpp reports no queue time');
  // The client's TTFT is its own (the first token at 480 ms, not the server's 452.4 ms); the
  // difference is the client overhead, summarized like any record metric.
  const ttftMs = metric(line, 'time_to_first_token') as number;
  assert.ok(ttftMs >= 480, `TTFT ${ttftMs}`);
  const overheadMs = metric(line, 'client_overhead_ms') as number;
  assert.ok(overheadMs >= 480 - 452.4 && overheadMs < ttftMs, `client_overhead_ms ${overheadMs}`);
  const stats = summary.client_overhead_ms as { count: number; avg: number; unit: string };
  assert.deepEqual([stats.count, stats.avg, stats.unit], [1, overheadMs, 'ms']);
});

test('t31: a server TTFT longer than the client’s gives no client overhead, and the run warns', async () => {
  const fixture = own.find((f) => f.name === 't31-server-ttft-above-client') as Fixture;
  const run = await profileFixture(player, fixture);
  checkExpect(fixture, run, player);
  const { line, summary } = run;
  assert.equal(metric(line, 'server_ttft_ms'), 612.4, 'the server’s figure is kept as it sent it');
  assert.ok((metric(line, 'time_to_first_token') as number) < 612.4);
  assert.equal(metric(line, 'client_overhead_ms'), undefined, 'no negative overhead');
  assert.equal(summary.client_overhead_ms, undefined);
  const warning = summary.warnings.find((w) => w.includes('server TTFT (server_ttft_ms)'));
  assert.ok(warning?.startsWith('1 of 1 requests'), `warnings: ${JSON.stringify(summary.warnings)}`);
});

test('t32: a negative server duration is not used (absent, never 0), and the run warns naming the field', async () => {
  const fixture = own.find((f) => f.name === 't32-server-timing-negative') as Fixture;
  const run = await profileFixture(player, fixture);
  checkExpect(fixture, run, player);
  const { line, summary } = run;
  assert.equal(line.metadata.server_timing_source, 'llamacpp_timings');
  assert.equal(metric(line, 'server_ttft_ms'), undefined);
  assert.equal(metric(line, 'server_prefill_ms'), undefined);
  assert.equal(metric(line, 'server_decode_ms'), 398.6, 'the usable fields are kept');
  assert.equal(metric(line, 'client_overhead_ms'), undefined);
  const warning = summary.warnings.find((w) => w.includes('server timing that is not a duration'));
  assert.match(
    warning ?? '',
    /^1 of 1 requests .*\(e\.g\. prompt_ms=-133\.9\)/,
    JSON.stringify(summary.warnings),
  );
});

test('a server that sends no timing gets no server_* metric and no client overhead', async () => {
  const fixture = handed.find((f) => f.name === 'b01-role-only-first-chunk') as Fixture;
  const run = await profileFixture(player, fixture);
  assert.equal(run.line.metadata.server_timing_source, null);
  const tags = Object.keys(run.line.metrics).filter(
    (tag) => tag.startsWith('server_') || tag === 'client_overhead_ms',
  );
  assert.deepEqual(tags, []);
  assert.equal(run.summary.client_overhead_ms, undefined);
});
