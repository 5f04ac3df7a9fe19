/**
 * Every SSE fixture, played by the loopback player and measured the way a user measures it:
 * `runProfile` (one request), then the exported `profile_export.jsonl` line and summary compared with
 * the fixture's `expect` (FORMAT.md §5). The handed fixtures (test/fixtures/sse, `b…`) and
 * tokenload's own (test/fixtures/sse-tokenload, `t…`: the classes behind the handed ones) run the
 * same way. A fixture that states `itlPerChunkUsageMs` runs twice: without `--per-chunk-usage`
 * (ITL must be AIPerf's `(latency − TTFT)/(OSL − 1)`, `itlMs`) and with it.
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
import { checkExpect, type ProfileFixtureOptions, profileFixture } from '../helpers/fixture-profile.js';

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

test('fixture sets: all 26 handed fixtures are played, and tokenload’s own ones', () => {
  assert.equal(handed.length, 26);
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
