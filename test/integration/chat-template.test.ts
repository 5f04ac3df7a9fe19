/**
 * Issue 15 scope 2, through the product: `--apply-chat-template` renders the tokenizer's chat
 * template on the client and counts ISL as a chat server counts `usage.prompt_tokens`. Against the
 * simulator rendering Qwen's ChatML (`chat-template=chatml`) with the bundled Qwen3 tokenizer (whose
 * tokenizer_config.json holds the real Qwen3 template), a trace row's `input_length` is then the
 * server's prompt count, the user text being shorter by the template's tokens; the usage check
 * learns an overhead of 0 in every message layout; both counts are in the records. Every figure
 * compared is one the run exported.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { profileConfig } from '../../src/config/schema.js';
import type { UsageCheckSummary } from '../../src/metrics/usage-check.js';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { packageRoot } from '../../src/util/package-root.js';

interface RecordLine {
  metadata: { turn_index: number; conversation_id: string };
  metrics: Record<string, { value: number }>;
}

interface Exported {
  records: RecordLine[];
  summary: Record<string, unknown> & {
    warnings: string[];
    usage_check?: UsageCheckSummary;
    tokenizer?: { source: string; chat_template: string | null };
  };
  console: string;
}

const SILENT = { info: () => undefined, warn: () => undefined };

async function profile(input: Partial<ProfileConfigInput>): Promise<Exported> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-chat-template-'));
  const config = profileConfig({
    models: ['Qwen/Qwen3-0.6B'],
    url: chatml.url,
    streaming: true,
    concurrency: 2,
    randomSeed: 3,
    artifactDir: dir,
    clientWarmupMs: 0,
    ui: 'none',
    commandLine: 'chat template test',
    ...input,
  });
  const outcome = await runProfile(config, { log: SILENT, stopSignal: new AbortController().signal });
  const text = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim();
  return {
    records: text
      .split('\n')
      .map((l) => JSON.parse(l.replace(/"(\w+_ns)":(\d+)/g, '"$1":"$2"')) as RecordLine),
    summary: JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')),
    console: outcome.consoleText,
  };
}

function value(r: RecordLine, tag: string): number {
  const v = r.metrics[tag]?.value;
  assert.equal(typeof v, 'number', `${tag} present`);
  return v as number;
}

/** A Mooncake trace of `rows` (input_length, hash_ids), 16-token blocks, a row every 5 ms. */
function trace(rows: Array<{ input_length: number; hash_ids: number[] }>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-chat-template-trace-'));
  const file = join(dir, 'trace.jsonl');
  const lines = rows.map((r, i) => JSON.stringify({ timestamp: i * 5, output_length: 3, ...r }));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const TRACE_ROWS = [
  { input_length: 40, hash_ids: [1, 2, 3] },
  { input_length: 48, hash_ids: [1, 2, 3] },
  { input_length: 100, hash_ids: [1, 2] },
  { input_length: 9, hash_ids: [7] },
  { input_length: 5, hash_ids: [] },
  // Long enough (some 40,000 characters) for the count that does not re-tokenize the text.
  { input_length: 6000, hash_ids: [1, 2, 3, 4] },
  { input_length: 300, hash_ids: [] },
];

function replayConfig(file: string): Partial<ProfileConfigInput> {
  return { inputFile: file, customDatasetType: 'mooncake_trace', islBlockSize: 16, concurrency: undefined };
}

let chatml: RunningSimulator;
before(async () => {
  chatml = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1, chatTemplate: 'chatml' });
});
after(async () => {
  await chatml.close();
});

test('a trace row input_length is the templated prompt the server counts; the text is shorter by the template', async () => {
  const file = trace(TRACE_ROWS);
  const plain = await profile(replayConfig(file));
  const learned = plain.summary.usage_check?.template_overhead_tokens;
  assert.ok(typeof learned === 'number' && learned > 0, 'without the flag the server counts a template');
  assert.ok(
    plain.records.every((r) => r.metrics.input_text_tokens === undefined),
    'no text count without it',
  );

  const templated = await profile({ ...replayConfig(file), applyChatTemplate: true });
  assert.equal(templated.records.length, TRACE_ROWS.length);
  // The server counts exactly the ISL the client built, for every row the template fits in.
  const fits = templated.records.filter((r) => value(r, 'input_sequence_length') > learned);
  for (const r of templated.records) {
    assert.equal(value(r, 'usage_prompt_tokens'), value(r, 'input_sequence_length'));
    assert.equal(value(r, 'input_templated_tokens'), value(r, 'input_sequence_length'));
  }
  for (const r of fits)
    assert.equal(value(r, 'input_templated_tokens') - value(r, 'input_text_tokens'), learned);
  const expected = TRACE_ROWS.map((r) => r.input_length).filter((n) => n > learned);
  assert.deepEqual(
    fits.map((r) => value(r, 'input_sequence_length')).sort((a, b) => a - b),
    expected.sort((a, b) => a - b),
  );
  // The row shorter than the template: an empty text, its ISL the template's, and a warning.
  const short = templated.records.filter((r) => value(r, 'input_sequence_length') <= learned);
  assert.deepEqual(
    short.map((r) => value(r, 'input_text_tokens')),
    [0],
  );
  assert.ok(
    templated.summary.warnings.some((w) =>
      w.startsWith('1 prompts asked for fewer tokens than the chat template'),
    ),
    templated.summary.warnings.join('\n'),
  );
  const check = templated.summary.usage_check;
  assert.equal(check?.template_overhead_tokens, 0);
  assert.equal(check?.discrepant, 0);
  assert.match(templated.console, /Usage check: chat template overhead learned .*: 0 tokens for user×1/);
  assert.match(
    templated.console,
    /Tokenizer: the bundled Qwen3 vocabulary .*chat template applied: .*tokenizer_config\.json/,
  );
  assert.equal(templated.summary.tokenizer?.source, 'builtin');
});

test('multi-turn history through the template: every message layout learns an overhead of 0', async () => {
  const run = await profile({
    synthetic: { isl: 50, osl: 6, numDatasetEntries: 6, sessionTurnsMean: 3 },
    requestCount: 18,
    applyChatTemplate: true,
  });
  const check = run.summary.usage_check;
  assert.ok(check !== undefined);
  assert.equal(check.requests_compared, run.records.length);
  assert.deepEqual(
    [...check.per_layout].map((l) => l.layout).sort((a, b) => a.length - b.length),
    ['user×1', 'user×2 assistant×1', 'user×3 assistant×2'],
  );
  for (const l of check.per_layout) {
    assert.equal(l.min_overhead_tokens, 0, l.layout);
    assert.equal(l.max_overhead_tokens, 0, l.layout);
  }
  assert.equal(check.discrepant, 0);
  // ISL counts the whole request rendered through the template, history included (as AIPerf), so it
  // is the server's prompt_tokens on every turn; --isl is each turn's own templated prompt.
  for (const r of run.records)
    assert.equal(value(r, 'input_sequence_length'), value(r, 'usage_prompt_tokens'));
  for (const r of run.records.filter((x) => x.metadata.turn_index === 0)) {
    assert.equal(value(r, 'input_sequence_length'), 50);
    assert.equal(r.metrics.turn_input_sequence_length, undefined);
  }
  const later = run.records.filter((x) => x.metadata.turn_index > 0);
  assert.ok(later.length > 0);
  for (const r of later) {
    assert.equal(value(r, 'turn_input_sequence_length'), 50);
    assert.ok(value(r, 'input_sequence_length') > 50);
  }
});

test('--apply-chat-template needs an endpoint whose server applies one', () => {
  assert.throws(
    () => profileConfig({ models: ['m'], endpointType: 'completions', applyChatTemplate: true }),
    (err: Error & { option?: string }) => {
      assert.equal(err.name, 'ConfigError');
      assert.equal(err.option, '--apply-chat-template');
      assert.match(err.message, /--endpoint-type chat, responses or messages/);
      return true;
    },
  );
});

/** A tokenizer folder holding the bundled Qwen3 tokenizer.json and, when given, a chat_template.jinja. */
function tokenizerFolder(template?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-tokenizer-folder-'));
  const assets = join(packageRoot(), 'assets', 'tokenizers', 'qwen3');
  writeFileSync(join(dir, 'tokenizer.json'), gunzipSync(readFileSync(join(assets, 'tokenizer.json.gz'))));
  if (template !== undefined) {
    copyFileSync(join(assets, 'tokenizer_config.json'), join(dir, 'tokenizer_config.json'));
    writeFileSync(join(dir, 'chat_template.jinja'), template);
  }
  return dir;
}

test('a tokenizer without a chat template fails before sending; chat_template.jinja wins over the config', async () => {
  const bare = tokenizerFolder();
  await assert.rejects(
    profile({ tokenizer: bare, applyChatTemplate: true, requestCount: 2 }),
    (err: Error) => {
      assert.equal(err.name, 'TokenizerLoadError');
      assert.match(err.message, /has no chat template/);
      assert.ok(err.message.includes(bare), err.message);
      return true;
    },
  );

  const chatmlJinja =
    "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}{{ '<|im_start|>assistant\\n' }}";
  const withFile = tokenizerFolder(chatmlJinja);
  const run = await profile({
    tokenizer: withFile,
    applyChatTemplate: true,
    synthetic: { isl: 64, osl: 3, numDatasetEntries: 4 },
    requestCount: 4,
  });
  assert.equal(run.summary.tokenizer?.source, 'local');
  assert.equal(run.summary.tokenizer?.chat_template, join(withFile, 'chat_template.jinja'));
  for (const r of run.records) assert.equal(value(r, 'usage_prompt_tokens'), 64);
});

test('a template that raises for a request makes it a failed record of type ChatTemplateError, naming the file', async () => {
  const folder = tokenizerFolder("{{ raise_exception('this template takes no user messages') }}");
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-chat-template-raise-'));
  const outcome = await runProfile(
    profileConfig({
      models: ['Qwen/Qwen3-0.6B'],
      tokenizer: folder,
      url: chatml.url,
      applyChatTemplate: true,
      synthetic: { isl: 32, osl: 3, numDatasetEntries: 2 },
      requestCount: 2,
      artifactDir: dir,
      clientWarmupMs: 0,
      ui: 'none',
    }),
    { log: SILENT, stopSignal: new AbortController().signal },
  );
  const lines = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 2);
  for (const line of lines) {
    const error = (JSON.parse(line) as { error: { code: number; type: string; message: string } }).error;
    assert.deepEqual([error.code, error.type], [0, 'ChatTemplateError']);
    assert.equal(
      error.message,
      `the chat template of ${join(folder, 'chat_template.jinja')} raised: this template takes no user messages`,
    );
  }
  assert.equal(outcome.status.exit_code, 3);
  assert.match(outcome.status.reason ?? '', /0 ChatTemplateError ×2/);
});

test('chat_template_kwargs sent in the body reach the client render too (Qwen3 enable_thinking)', async () => {
  const overhead = async (extraInputs: Record<string, unknown>) => {
    const run = await profile({
      synthetic: { isl: 40, osl: 3, numDatasetEntries: 3 },
      requestCount: 3,
      applyChatTemplate: true,
      extraInputs,
    });
    return run.records.map((r) => value(r, 'input_templated_tokens') - value(r, 'input_text_tokens'));
  };
  const plain = await overhead({});
  const noThinking = await overhead({ chat_template_kwargs: { enable_thinking: false } });
  // Qwen3's template adds an empty think block to the generation prompt when thinking is off.
  assert.ok(
    noThinking.every((n, i) => n > (plain[i] as number)),
    `${plain} → ${noThinking}`,
  );
});
