/**
 * Issue 14 item 8: tokenload against a real inference engine. llama.cpp (node-llama-cpp's prebuilt
 * binary, a pinned dev dependency) serves a tiny random-weight Qwen3 model written at setup from the
 * bundled tokenizer (test/engine/tiny-qwen3.ts) behind a minimal OpenAI-compatible server
 * (test/engine/engine-server.ts). The built CLI (`bin/tokenload.js`) replays the Bailian multi-turn
 * head40 trace against it streamed at concurrency 1 and 4 ({@link REPLAYED} requests each), then its first three requests unstreamed,
 * with every answer capped at {@link MAX_OSL} tokens (`--synthesis-max-osl`: the trace asks for 16,196
 * output tokens, which a single-threaded random 151,669-token output layer takes minutes to generate),
 * each run on a fresh engine, and the test reads what a user reads: profile_export.jsonl,
 * profile_export_aiperf.json and the console. About 25 s on 2 cores.
 * The replays run without the client warm-up (`--client-warmup-ms 0`; it sends nothing to the
 * engine and took its 5 s cap in each of the four runs): the one timed assertion compares the
 * engine's TTFT and ITL at concurrency 4 with those at 1, where four sequences share llama.cpp's two
 * cores (measured with the warm-up: TTFT p50 28 against 357 ms, ITL p50 3.4 against 9.1 ms); a cold
 * client's first sends and reads cost a few ms in both runs alike, more in the one reading 4 streams.
 *
 * Without a prebuilt binary for this platform the tests are skipped locally (with the reason) and
 * fail on CI (CI=true), where the binary is expected.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadBailianTrace } from '../../src/dataset/bailian.js';
import { PromptSynthesizer } from '../../src/prompt/synthesizer.js';
import { loadTokenizer } from '../../src/prompt/tokenizer.js';
import { type EngineServer, engineBinary, startEngineServer } from '../engine/engine-server.js';
import { cachedTinyQwen3, ENGINE_TEST_SEED } from '../engine/tiny-model-cache.js';
import type { TinyModelFile } from '../engine/tiny-qwen3.js';
import { builtCli } from '../helpers/built-package.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
const BIN = builtCli();
const MODEL_NAME = 'tiny-qwen3-random';
/** `--synthesis-max-osl` of every replay: the rows' output_length capped at this many tokens. */
const MAX_OSL = 32;
/** Requests of each streamed replay: the trace's first sessions, 24 of its 40 rows (prefill is most of the time). */
const REPLAYED = 24;
/** KV cells per sequence: the trace's longest request (9,843 + 701 tokens) plus the template, rounded up. */
const CONTEXT_TOKENS = 12_288;
/** Sequences of the engine: requests in parallel, and its prefix cache (one prompt per sequence). */
const SEQUENCES = 16;
/** Hang guard for the replays (they take under a minute on 2 cores). */
const JOB_BOUND_MS = 600_000;

const onCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const engineError = await engineBinary().then(
  () => null,
  (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err)),
);
const skip =
  engineError !== null && !onCi
    ? `no prebuilt llama.cpp binary of node-llama-cpp loads on ${process.platform}-${process.arch} (${engineError}); it ships them for Linux, macOS and Windows on x64 and arm64`
    : false;

interface MetricValue {
  value: number;
  unit: string;
}

interface ExportRecord {
  metadata: { conversation_id: string; turn_index: number };
  metrics: Record<string, MetricValue | undefined>;
  error: unknown;
}

interface SummaryStat {
  avg: number;
  p50: number;
}

/** The summary's `usage_check` fields this test reads. */
interface UsageCheckJson {
  requests_compared: number;
  discrepant: number;
  template_overhead_tokens: number | null;
}

/** The summary's `cache_check` fields this test reads. */
interface CacheCheckJson {
  requests_with_ideal: number;
  requests_reported: number;
  ideal_cached_tokens: number;
  reported_cached_tokens: number;
  over_reported: number;
}

interface Replay {
  /** `concurrency N`, `non-streamed`. */
  label: string;
  /** Requests the run sends. */
  requests: number;
  code: number | null;
  console: string;
  records: ExportRecord[];
  summary: Record<string, unknown> & { warnings: string[] };
}

let work = '';
let model: TinyModelFile;
let writeMs = 0;

before(() => {
  if (skip !== false) return;
  work = mkdtempSync(join(tmpdir(), 'tokenload-real-engine-'));
  const start = performance.now();
  model = cachedTinyQwen3(ENGINE_TEST_SEED);
  writeMs = performance.now() - start;
});

after(() => {
  if (work !== '') rmSync(work, { recursive: true, force: true });
});

function engineOptions(): Parameters<typeof startEngineServer>[0] {
  return {
    modelPath: model.path,
    modelName: MODEL_NAME,
    sequences: SEQUENCES,
    contextSize: CONTEXT_TOKENS,
    seed: 7,
  };
}

/** Runs the built CLI; resolves with its exit code and its stdout + stderr. */
function runCli(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (b: Buffer) => {
    output += b.toString('utf8');
  });
  child.stderr.on('data', (b: Buffer) => {
    output += b.toString('utf8');
  });
  const bound = setTimeout(() => child.kill('SIGKILL'), JOB_BOUND_MS);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(bound);
      resolve({ code, output });
    }),
  );
}

/**
 * The head40 trace replayed by the CLI with `args` (load and streaming flags) against a fresh engine
 * (cold prefix cache); `requests` is what the run is expected to send.
 */
async function replay(label: string, requests: number, args: string[]): Promise<Replay> {
  const server = await startEngineServer(engineOptions());
  const dir = join(work, label.replace(/\W+/g, '-'));
  try {
    const { code, output } = await runCli([
      'profile',
      ...['--model', MODEL_NAME, '--tokenizer', 'builtin', '--url', server.url, '--endpoint-type', 'chat'],
      ...args,
      ...['--input-file', TRACE, '--custom-dataset-type', 'bailian_trace', '--no-fixed-schedule'],
      ...['--synthesis-max-osl', String(MAX_OSL)],
      ...['--random-seed', '1', '--ui', 'none', '--client-warmup-ms', '0', '--artifact-dir', dir],
    ]);
    const records = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as ExportRecord);
    const summary = JSON.parse(
      readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'),
    ) as Replay['summary'];
    return { label, requests, code, console: output, records, summary };
  } finally {
    await server.close();
  }
}

function metric(record: ExportRecord, tag: string): number {
  const m = record.metrics[tag];
  assert.ok(
    m !== undefined,
    `record ${record.metadata.conversation_id}/${record.metadata.turn_index} has no ${tag}`,
  );
  return m.value;
}

/** The trace's rows by (session id, turn index), as tokenload's own Bailian loader forms sessions. */
async function traceTurns(): Promise<Map<string, { inputLength: number; maxTokens: number }>> {
  const dataset = await loadBailianTrace(TRACE, { synthesis: { maxOsl: MAX_OSL } });
  const turns = new Map<string, { inputLength: number; maxTokens: number }>();
  for (const c of dataset.conversations) {
    for (const t of c.turns) {
      assert.ok(t.prompt.kind === 'synthetic' && t.maxTokens !== undefined, `turn ${c.id}/${t.index}`);
      turns.set(`${c.id}/${t.index}`, { inputLength: t.prompt.inputLength, maxTokens: t.maxTokens });
    }
  }
  return turns;
}

test('the tiny Qwen3 GGUF loads in llama.cpp and tokenizes exactly like tokenload', { skip }, async (t) => {
  assert.equal(engineError, null, `no llama.cpp binary on CI (CI=${process.env.CI}): ${engineError}`);
  const server: EngineServer = await startEngineServer(engineOptions());
  try {
    t.diagnostic(
      `model ${(model.bytes / 1e6).toFixed(1)} MB ready in ${writeMs.toFixed(0)} ms (written or found in the test cache), vocabulary ${model.vocabSize}, load ${server.loadMs.toFixed(0)} ms`,
    );
    const ours = loadTokenizer();
    const synthesizer = PromptSynthesizer.create(ours, 1);
    const samples = [
      synthesizer.synthesize(300, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 16, 'sample').text,
      'Hello, world! It’s 2025-12-01 at 09:30; naïve café, 中文分词, русский, 🤖🚀\n\n\tdone  ',
      "def f(x):\n    return x**2  # it's\r\n",
      '<|im_start|>user\nhi<|im_end|>\n<think>\n\n</think>\n\n',
    ];
    for (const text of samples) {
      assert.deepEqual(
        server.tokenize(text),
        ours.encode(text),
        `token ids of ${JSON.stringify(text.slice(0, 60))}`,
      );
    }
  } finally {
    await server.close();
  }
});

test('head40 replayed on llama.cpp at concurrency 1 and 4, and three requests unstreamed', {
  skip,
  timeout: JOB_BOUND_MS,
}, async (t) => {
  assert.equal(engineError, null, `no llama.cpp binary on CI (CI=${process.env.CI}): ${engineError}`);
  const turns = await traceTurns();
  const server = await startEngineServer(engineOptions());
  const overhead = server.promptTokens([{ role: 'user', content: '' }]).length;
  await server.close();
  const started = performance.now();
  const replayed = ['--streaming', '--request-count', String(REPLAYED)];
  const one = await replay('concurrency 1', REPLAYED, [...replayed, '--concurrency', '1']);
  const four = await replay('concurrency 4', REPLAYED, [...replayed, '--concurrency', '4']);
  t.diagnostic(`both replays: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const plain = await replay('non-streamed', 3, ['--concurrency', '1', '--request-count', '3']);
  const templated = await replay('templated', 6, [
    ...['--streaming', '--concurrency', '2', '--request-count', '6', '--apply-chat-template'],
  ]);
  for (const run of [one, four])
    t.diagnostic(`${run.label} warnings: ${JSON.stringify(run.summary.warnings)}`);

  await t.test('every request succeeds, with exactly the output length the row asks for', () => {
    for (const run of [one, four, plain]) {
      assert.equal(run.code, 0, run.console);
      assert.equal(run.records.length, run.requests, run.label);
      for (const r of run.records) {
        const row = turns.get(`${r.metadata.conversation_id}/${r.metadata.turn_index}`);
        assert.ok(
          row !== undefined,
          `no trace row for ${r.metadata.conversation_id}/${r.metadata.turn_index}`,
        );
        assert.equal(r.error, null, JSON.stringify(r.error));
        assert.equal(metric(r, 'output_sequence_length'), row.maxTokens);
      }
    }
  });

  await t.test("the engine's prompt_tokens are each row's input_length plus the template", () => {
    for (const run of [one, four, plain]) {
      const deviations = run.records.map((r) => {
        const row = turns.get(`${r.metadata.conversation_id}/${r.metadata.turn_index}`);
        return metric(r, 'usage_prompt_tokens') - (row?.inputLength ?? Number.NaN) - overhead;
      });
      const cached = run.records.reduce((sum, r) => sum + metric(r, 'usage_cached_tokens'), 0);
      t.diagnostic(
        `${run.label}: template overhead ${overhead} tokens, max |deviation| ` +
          `${Math.max(...deviations.map(Math.abs))}, engine cached tokens ${cached}`,
      );
      assert.deepEqual(deviations, new Array(run.records.length).fill(0));
    }
  });

  await t.test('--apply-chat-template: the engine counts exactly each row input_length', () => {
    assert.equal(templated.code, 0, templated.console);
    assert.equal(templated.records.length, templated.requests);
    for (const r of templated.records) {
      const row = turns.get(`${r.metadata.conversation_id}/${r.metadata.turn_index}`);
      assert.equal(metric(r, 'usage_prompt_tokens'), row?.inputLength);
      assert.equal(metric(r, 'input_sequence_length'), row?.inputLength);
      assert.equal(metric(r, 'input_text_tokens'), (row?.inputLength ?? Number.NaN) - overhead);
    }
    const check = templated.summary.usage_check as UsageCheckJson;
    assert.equal(check.template_overhead_tokens, 0, JSON.stringify(check));
    assert.equal(check.discrepant, 0);
  });

  await t.test('the usage check learns the template and raises no discrepancy', () => {
    for (const run of [one, four]) {
      const check = run.summary.usage_check as UsageCheckJson;
      t.diagnostic(`${run.label} usage_check: ${JSON.stringify(check)}`);
      assert.equal(check.template_overhead_tokens, overhead, run.label);
      assert.equal(check.requests_compared, run.requests, run.label);
      assert.equal(check.discrepant, 0, run.label);
      const said = run.summary.warnings.filter((w) => /usage\.prompt_tokens|--tokenizer/.test(w));
      assert.deepEqual(said, [], `summary warnings at ${run.label}`);
      assert.doesNotMatch(run.console, /--tokenizer matches/);
    }
  });

  await t.test("the engine's cached tokens stay within what the trace's hash_ids explain", () => {
    for (const run of [one, four]) {
      const check = run.summary.cache_check as CacheCheckJson;
      t.diagnostic(`${run.label} cache_check: ${JSON.stringify(check)}`);
      assert.equal(check.requests_with_ideal, run.requests, run.label);
      assert.equal(check.requests_reported, run.requests, run.label);
      assert.ok(check.ideal_cached_tokens > 0, `${run.label}: the trace shares prefixes`);
      assert.equal(check.over_reported, 0, run.label);
      assert.deepEqual(
        run.summary.warnings.filter((w) => /cached prompt tokens/.test(w)),
        [],
        run.label,
      );
    }
  });

  await t.test("a real engine's streams raise no stream-integrity flag", () => {
    for (const run of [one, four, plain, templated]) {
      const section = run.summary.stream_integrity as Record<string, number>;
      t.diagnostic(`${run.label} stream_integrity: ${JSON.stringify(section)}`);
      for (const key of ['buffered', 'cumulative', 'usage_untrusted', 'malformed_event', 'event_too_large'])
        assert.equal(section[key], 0, `${run.label} stream_integrity.${key}`);
      const flagged = run.records.filter(
        (r) => (r as { stream_integrity?: unknown }).stream_integrity !== undefined,
      );
      assert.deepEqual(flagged, [], run.label);
    }
  });

  await t.test('TTFT and ITL at concurrency 4 exceed those at concurrency 1 (avg and p50)', () => {
    for (const tag of ['time_to_first_token', 'inter_token_latency']) {
      const a = one.summary[tag] as SummaryStat;
      const b = four.summary[tag] as SummaryStat;
      t.diagnostic(
        `${tag}: concurrency 1 avg ${a.avg.toFixed(2)} p50 ${a.p50.toFixed(2)}; concurrency 4 avg ${b.avg.toFixed(2)} p50 ${b.p50.toFixed(2)} ms`,
      );
      assert.ok(b.avg > a.avg, `${tag} avg: ${b.avg} at concurrency 4, ${a.avg} at 1`);
      assert.ok(b.p50 > a.p50, `${tag} p50: ${b.p50} at concurrency 4, ${a.p50} at 1`);
    }
  });
});
