/**
 * Issue 14 scope 6, through the product: the usage check learns a chat server's template overhead
 * from the run (per message layout) instead of calling every short prompt a tokenizer mismatch; a
 * server whose tokenizer really differs is still reported; and re-tokenized output text is no
 * evidence when the server counted the output itself. Every figure compared is one the run exported
 * (`profile_export.jsonl`, `profile_export_aiperf.json`, the console text).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { profileConfig } from '../../src/config/schema.js';
import type { UsageCheckSummary } from '../../src/metrics/usage-check.js';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { type FixturePlayer, loadFixtures, startFixturePlayer } from '../helpers/fixture-player.js';
import { type ExportedRecord, readRunArtifacts } from '../helpers/run-artifacts.js';

type RecordLine = ExportedRecord;

interface Exported {
  records: RecordLine[];
  summary: Record<string, unknown> & {
    warnings: string[];
    usage_check?: UsageCheckSummary;
    usage_discrepancy_count?: { avg: number };
  };
  console: string;
}

const SILENT = { info: () => undefined, warn: () => undefined };
const TOKENIZER_WARNING = /check that --tokenizer matches/;

async function profile(input: Partial<ProfileConfigInput> & { url: string }): Promise<Exported> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-usage-check-'));
  const config = profileConfig({
    models: ['sim-model'],
    tokenizer: 'builtin',
    streaming: true,
    synthetic: { isl: 60, islStddev: 20, osl: 4, numDatasetEntries: 20 },
    concurrency: 4,
    randomSeed: 5,
    artifactDir: dir,
    clientWarmupMs: 0,
    ui: 'none',
    commandLine: 'usage check test',
    ...input,
  });
  const outcome = await runProfile(config, { log: SILENT, stopSignal: new AbortController().signal });
  return {
    ...readRunArtifacts<Exported['summary']>(dir),
    console: outcome.consoleText,
  };
}

function value(r: RecordLine, tag: string): number {
  const v = r.metrics[tag]?.value;
  assert.equal(typeof v, 'number', `${tag} present`);
  return v as number;
}

let chatml: RunningSimulator;
before(async () => {
  chatml = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1, chatTemplate: 'chatml' });
});
after(async () => {
  await chatml.close();
});

test('a chat template is learned per message layout, reported, and never counted as a discrepancy', async () => {
  // Multi-turn sessions that re-send history: 1, 3 and 5 messages per request.
  const run = await profile({
    url: chatml.url,
    synthetic: { isl: 50, islStddev: 15, osl: 6, numDatasetEntries: 12, sessionTurnsMean: 3 },
    requestCount: 36,
  });
  const check = run.summary.usage_check;
  assert.ok(check !== undefined, 'usage_check in the summary');
  assert.equal(check.requests_compared, run.records.length);
  assert.equal(check.requests_unchecked, 0);
  assert.equal(check.discrepant, 0);
  assert.equal(run.summary.usage_discrepancy_count?.avg, 0);
  assert.ok(!run.summary.warnings.some((w) => TOKENIZER_WARNING.test(w)), run.summary.warnings.join('\n'));
  // The raw AIPerf difference still says how far off a later turn's usage is from its own prompt.
  assert.ok(run.records.some((r) => value(r, 'usage_prompt_tokens_diff_pct') > 10));

  // One layout per turn; each message adds the same template tokens, so overhead grows with them.
  const layouts = [...check.per_layout].sort((a, b) => a.layout.length - b.layout.length);
  assert.deepEqual(
    layouts.map((l) => l.layout),
    ['user×1', 'user×2 assistant×1', 'user×3 assistant×2'],
  );
  const overheads = layouts.map((l) => l.overhead_tokens as number);
  assert.ok((overheads[0] as number) > 0, `overheads ${overheads}`);
  assert.ok(
    (overheads[2] as number) - (overheads[1] as number) ===
      (overheads[1] as number) - (overheads[0] as number),
  );
  assert.ok((overheads[1] as number) > (overheads[0] as number));
  // A first turn sends its own prompt only: its exported usage is ISL + the learned overhead.
  for (const r of run.records.filter((x) => x.metadata.turn_index === 0)) {
    assert.equal(value(r, 'usage_prompt_tokens') - value(r, 'input_sequence_length'), overheads[0]);
  }
  assert.equal(check.template_overhead_tokens, check.per_layout[0]?.overhead_tokens);
  assert.match(
    run.console,
    new RegExp(`Usage check: chat template overhead learned .*${overheads[0]} tokens for user×1`),
  );
  assert.match(run.console, /0 of 36 requests disagree/);
});

test('the completions endpoint has no chat template: one message learns 0, a joined history its joiners', async () => {
  const run = await profile({ url: chatml.url, endpointType: 'completions', requestCount: 20 });
  assert.equal(run.summary.usage_check?.template_overhead_tokens, 0);
  assert.equal(run.summary.usage_check?.overhead_of, 'prompt_joiners');
  for (const r of run.records)
    assert.equal(value(r, 'usage_prompt_tokens'), value(r, 'input_sequence_length'));
  assert.equal(run.summary.usage_discrepancy_count?.avg, 0);
  assert.match(run.console, /Usage check: prompt template\/joiner overhead learned .* for user×1/);
  assert.doesNotMatch(run.console, /chat template/);

  // Multi-turn: the history is joined into one prompt with blank lines, which the server counts.
  const multi = await profile({
    url: chatml.url,
    endpointType: 'completions',
    synthetic: { isl: 50, islStddev: 15, osl: 6, numDatasetEntries: 12, sessionTurnsMean: 3 },
    requestCount: 36,
  });
  const layouts = multi.summary.usage_check?.per_layout ?? [];
  const later = layouts.filter((l) => l.layout !== 'user×1');
  assert.ok(later.length > 0 && later.every((l) => (l.overhead_tokens ?? 0) > 0), JSON.stringify(layouts));
  assert.equal(layouts.find((l) => l.layout === 'user×1')?.overhead_tokens, 0);
  assert.doesNotMatch(multi.console, /chat template/);
});

test('an overhead as large as the prompt is warned about as a probable tokenizer mismatch', async () => {
  // A server that counts every prompt twice: with prompts of one length, every request of the layout
  // is off by the same amount, so nothing is discrepant; only the size of the overhead gives it away.
  const isl = 100;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const choice = { index: 0, message: { role: 'assistant', content: 'a b' }, finish_reason: 'length' };
      const usage = { prompt_tokens: 2 * isl, completion_tokens: 2, total_tokens: 2 * isl + 2 };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'chat.completion', choices: [choice], usage }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const run = await profile({
      url,
      streaming: false,
      synthetic: { isl, osl: 2, numDatasetEntries: 4 },
      requestCount: 6,
    });
    const layout = run.summary.usage_check?.per_layout[0];
    assert.equal(layout?.overhead_tokens, isl);
    assert.equal(layout?.median_prompt_tokens, isl);
    assert.equal(run.summary.usage_check?.discrepant, 0);
    const warning = run.summary.warnings.find((w) =>
      /may be a tokenizer mismatch rather than a template/.test(w),
    );
    assert.ok(warning !== undefined, run.summary.warnings.join('\n'));
    assert.match(
      warning,
      new RegExp(`for user×1 is ${isl} tokens over a median client prompt of ${isl} tokens`),
    );
    assert.match(run.console, /Warning: the chat template overhead learned for user×1/);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('a real template overhead is not warned about', async () => {
  const run = await profile({ url: chatml.url, requestCount: 12 });
  assert.ok((run.summary.usage_check?.template_overhead_tokens ?? 0) > 0);
  assert.ok(
    !run.summary.warnings.some((w) => /rather than a template/.test(w)),
    run.summary.warnings.join('\n'),
  );
});

/** A character-level WordPiece tokenizer.json: a served model's tokenizer that is not the client's. */
function charTokenizer(): string {
  const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const vocab: Record<string, number> = { '[UNK]': 0 };
  for (const c of [...chars, ...[...chars].map((c) => `##${c}`)]) vocab[c] = Object.keys(vocab).length;
  const unk = { id: 0, content: '[UNK]', single_word: false, lstrip: false, rstrip: false };
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ ...unk, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: null,
    decoder: null,
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  };
  const path = join(mkdtempSync(join(tmpdir(), 'tokenload-char-tokenizer-')), 'tokenizer.json');
  writeFileSync(path, JSON.stringify(json));
  return path;
}

test('a server whose tokenizer differs from --tokenizer is still reported', async () => {
  const server = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1, tokenizer: charTokenizer() });
  try {
    const run = await profile({ url: server.url, requestCount: 20 });
    const discrepant = run.summary.usage_check?.discrepant ?? 0;
    assert.ok(discrepant > 0, JSON.stringify(run.summary.usage_check));
    assert.equal(run.summary.usage_discrepancy_count?.avg, discrepant);
    assert.ok(
      run.summary.warnings.some((w) => TOKENIZER_WARNING.test(w) && w.startsWith(`${discrepant} of 20`)),
    );
  } finally {
    await server.close();
  }
});

test('output text that re-tokenizes to another count is no evidence when the server sent usage', async () => {
  // b20: 100 tokens streamed, many of them single spaces that a tokenizer merges when it reads the
  // joined text back; the server's usage says 100.
  const fixture = loadFixtures().find((f) => f.name === 'b20-whitespace-chunks-usage-count');
  assert.ok(fixture !== undefined);
  const player: FixturePlayer = await startFixturePlayer([fixture]);
  try {
    const run = await profile({
      url: player.origin,
      models: [fixture.model],
      synthetic: { isl: 16, numDatasetEntries: 4, osl: 100 },
      requestCount: 4,
    });
    for (const r of run.records) {
      assert.equal(value(r, 'output_sequence_length'), value(r, 'usage_completion_tokens'));
      assert.ok(value(r, 'usage_completion_tokens_diff_pct') > 10, 'the re-tokenized text counts otherwise');
    }
    assert.equal(run.summary.usage_discrepancy_count?.avg, 0);
    assert.ok(!run.summary.warnings.some((w) => TOKENIZER_WARNING.test(w)), run.summary.warnings.join('\n'));
  } finally {
    await player.close();
  }
});
