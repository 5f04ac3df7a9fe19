/**
 * The OSL-mismatch count and warning, through the product (`runProfile` against recorded answers):
 * an output shorter than the requested max tokens is the EOS hint; one longer by the server's own
 * usage means the server ignored max tokens; one longer only by the client's re-count of the text (no
 * server usage) is no evidence of either and is not counted. Every figure read is one the run exported.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import {
  chatChunk,
  type FixturePlayer,
  inlineFixture,
  startFixturePlayer,
} from '../helpers/fixture-player.js';
import { type ExportedRecord, readRunArtifacts } from '../helpers/run-artifacts.js';

const SILENT = { info: () => undefined, warn: () => undefined };
const MAX_TOKENS = 8;
const REQUESTS = 4;
const EOS = /fewer output tokens than the requested max tokens.*probably stopped at EOS/;
const IGNORED =
  /more output tokens \(the server's usage\.completion_tokens\) than the requested max tokens.*ignored/;

/**
 * `streamed` chunks (" w0" … " w7": the client tokenizer reads each back as two tokens), then
 * `usage`. A usage below the chunks streamed would contradict the stream and not be used (stream
 * integrity), so a shorter answer streams as many chunks as its usage counts.
 */
function answer(name: string, usage: { completion_tokens: number } | null, streamed = MAX_TOKENS) {
  const chunks = Array.from({ length: streamed }, (_, i) => chatChunk(` w${i}`)).join('');
  const usageEvent =
    usage === null
      ? ''
      : `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 16, ...usage } })}\n\n`;
  return inlineFixture(name, {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    writes: [{ atMs: 0, data: `${chunks}${chatChunk(null, 'length')}${usageEvent}data: [DONE]\n\n` }],
    end: 'close',
  });
}

const fixtures = [
  answer('no-usage', null),
  answer('usage-longer', { completion_tokens: 2 * MAX_TOKENS }),
  answer('usage-shorter', { completion_tokens: MAX_TOKENS / 4 }, MAX_TOKENS / 4),
];
let player: FixturePlayer;
before(async () => {
  player = await startFixturePlayer(fixtures);
});
after(async () => {
  await player.close();
});

interface Summary {
  warnings: string[];
  osl_mismatch_count: { avg: number };
}

async function run(fixture: string): Promise<{ records: ExportedRecord[]; summary: Summary }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-osl-mismatch-'));
  await runProfile(
    profileConfig({
      models: ['test-model'],
      tokenizer: 'builtin',
      url: player.origin,
      streaming: true,
      headers: { 'x-fixture': fixture },
      synthetic: { isl: 16, osl: MAX_TOKENS, numDatasetEntries: REQUESTS },
      requestCount: REQUESTS,
      concurrency: 1,
      clientWarmupMs: 0,
      ui: 'none',
      artifactDir: dir,
      commandLine: 'osl mismatch test',
    }),
    { log: SILENT, stopSignal: new AbortController().signal },
  );
  return readRunArtifacts<Summary>(dir);
}

const osl = (r: ExportedRecord) => r.metrics.output_sequence_length?.value ?? Number.NaN;

test('an output longer only by the client re-count (no server usage) is no OSL mismatch', async () => {
  const { records, summary } = await run('no-usage');
  assert.equal(records.length, REQUESTS);
  // The client tokenizer's count is longer than the max tokens the server honoured.
  for (const r of records) assert.ok(osl(r) > MAX_TOKENS, `osl ${osl(r)}`);
  assert.equal(summary.osl_mismatch_count.avg, 0);
  assert.ok(!summary.warnings.some((w) => EOS.test(w) || IGNORED.test(w)), summary.warnings.join('\n'));
});

test("an output longer by the server's own usage: the server ignored max tokens", async () => {
  const { records, summary } = await run('usage-longer');
  for (const r of records) assert.ok(osl(r) > MAX_TOKENS);
  assert.equal(summary.osl_mismatch_count.avg, REQUESTS);
  const warned = summary.warnings.filter((w) => IGNORED.test(w));
  assert.equal(warned.length, 1, summary.warnings.join('\n'));
  assert.ok(warned[0]?.startsWith(`${REQUESTS} of ${REQUESTS} requests`));
  assert.ok(!summary.warnings.some((w) => EOS.test(w)));
});

test('an output shorter than requested: the EOS hint', async () => {
  const { records, summary } = await run('usage-shorter');
  for (const r of records) assert.ok(osl(r) < MAX_TOKENS);
  assert.equal(summary.osl_mismatch_count.avg, REQUESTS);
  const warned = summary.warnings.filter((w) => EOS.test(w));
  assert.equal(warned.length, 1, summary.warnings.join('\n'));
  assert.ok(warned[0]?.startsWith(`${REQUESTS} of ${REQUESTS} requests`));
  assert.ok(!summary.warnings.some((w) => IGNORED.test(w)));
});
