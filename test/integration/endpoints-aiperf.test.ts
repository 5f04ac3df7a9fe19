/**
 * AIPerf's documented `aiperf profile` commands for the endpoint types of its tutorials (messages,
 * rankings, template, image generation), run through the built CLI with only `aiperf` replaced by
 * `tokenload`, the `--url` pointed at the simulator and `--client-warmup-ms 0` added, in a fresh
 * working folder (so the artifacts land in `artifacts/<name>/` as they would for the user): the built
 * CLI's `main` in this process (a process start costs more than most of these runs), or a process of
 * its own for the one test that reads the console's stdout. Each
 * checks what a user checks: the request count the doc states, no errors, the metrics that make
 * sense for the endpoint (stream metrics only when streamed), and what the simulator received. The
 * model names of the docs are not on a Hub here: a Hugging Face cache holding the bundled tokenizer
 * under each name stands in for the user's own cache.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { CapturedRequest } from '../../src/simulator/routes-capture.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { shellWords } from '../helpers/aiperf-docs.js';
import { builtCli } from '../helpers/built-package.js';
import { runBuiltCliInProcess } from '../helpers/cli-in-process.js';
import { fakeCache, removeTempDirs, TOKENIZER_JSON } from '../helpers/hub-cli.js';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

const COMMIT = 'a'.repeat(40);

let sim: RunningSimulator;
const dirs: string[] = [];

before(async () => {
  sim = await startSimulator(
    { mode: 'fixed', ttftMs: 1, itlMs: 0, tokensPerChunk: 8 },
    { captureRequests: true },
  );
});

after(async () => {
  await sim.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  removeTempDirs();
});

interface DocRun {
  code: number | null;
  stdout: string;
  stderr: string;
  records: Array<{ metrics: Record<string, { value: unknown }>; error: unknown }>;
  summary: Record<string, { avg?: number } | unknown>;
  /** What the simulator received during this run. */
  requests: CapturedRequest[];
  /** The run's artifact folder (empty when it failed). */
  folder: string;
}

/**
 * Added to every command: the client warm-up (half a second of requests against a simulator inside
 * the CLI's own process, by default) sends nothing to the target and only readies the client's code;
 * these runs check counts and what the simulator received, not timing.
 */
const NO_CLIENT_WARMUP = ['--client-warmup-ms', '0'];

type Ran = Pick<DocRun, 'code' | 'stdout' | 'stderr'>;

/** The built CLI as a process in `cwd` with `env` added: exit code, stdout and stderr. */
async function inChild(cwd: string, env: Record<string, string>, argv: string[]): Promise<Ran> {
  const child = spawn(process.execPath, [builtCli(), ...argv], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

/**
 * The built CLI's `main` in this process, with `cwd` as the working folder and `env` set, both
 * restored after (its stdout is not captured: this process's stdout is the test runner's channel).
 * The run's worker threads (the server-metrics scraper, `--workers`) inherit this process's
 * `--import tsx`, which Node resolves from the working folder: `cwd` gets a `node_modules` link to
 * the project's so that it resolves there as in the project.
 */
async function inThisProcess(cwd: string, env: Record<string, string>, argv: string[]): Promise<Ran> {
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(cwd, 'node_modules'), 'dir');
  const home = process.cwd();
  const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
  Object.assign(process.env, env);
  process.chdir(cwd);
  try {
    return { ...(await runBuiltCliInProcess(argv)), stdout: '' };
  } finally {
    process.chdir(home);
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/**
 * Runs a doc's command (split as a shell splits it, quotes and continuations included): `aiperf` →
 * the built CLI, the host of `--url <doc url>` → the simulator's (its path kept), `$VAR` →
 * `test-key`; `files` are written into the working folder first.
 */
async function runDocCommand(
  command: string,
  files: Record<string, string> = {},
  how: { stdout?: boolean } = {},
): Promise<DocRun> {
  const cwd = mkdtempSync(join(tmpdir(), 'tokenload-docs-'));
  dirs.push(cwd);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(cwd, name), text);
  const words = shellWords(command.replace(/\$[A-Z_]+/g, 'test-key')).words;
  assert.equal(words[0], 'aiperf');
  const args = words.slice(1).map((w, i, all) => {
    // The doc's host and port become the simulator's; a path after them (template URLs) stays.
    if (all[i - 1] === '--url') return `${sim.url}${/^(?:https?:\/\/)?[^/]+(\/.*)?$/.exec(w)?.[1] ?? ''}`;
    return w;
  });
  const modelAt = Math.max(args.indexOf('--model'), args.indexOf('-m'));
  const model = args[modelAt + 1] as string;
  const cache = fakeCache(model, COMMIT, TOKENIZER_JSON);
  const seen = sim.capturedRequests().length;
  const env = { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1' };
  const argv = [...args, ...NO_CLIENT_WARMUP];
  const { code, stdout, stderr } =
    how.stdout === true ? await inChild(cwd, env, argv) : await inThisProcess(cwd, env, argv);
  const out: DocRun = { code, stdout, stderr, records: [], summary: {}, requests: [], folder: '' };
  if (code !== 0) return out;
  const [run] = readdirSync(join(cwd, 'artifacts'));
  const folder = join(cwd, 'artifacts', run as string);
  out.folder = folder;
  out.records = readFileSync(join(folder, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  out.summary = JSON.parse(readFileSync(join(folder, 'profile_export_aiperf.json'), 'utf8'));
  out.requests = sim
    .capturedRequests()
    .slice(seen)
    .filter((r) => r.path !== '/v1/models');
  return out;
}

/** The run ended 0 with `count` records and requests, none failed. */
function assertCompleted(run: DocRun, count: number): void {
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.records.length, count);
  for (const r of run.records) assert.equal(r.error, null);
  const measured = run.requests.filter((r) => r.headers['x-request-id'] !== undefined);
  assert.equal(measured.length, count);
  assert.equal((run.summary.request_count as { avg: number }).avg, count);
}

function bodies(run: DocRun): Record<string, unknown>[] {
  return run.requests.filter((r) => r.headers['x-request-id'] !== undefined).map((r) => JSON.parse(r.body));
}

const metric = (run: DocRun, name: string): unknown[] => run.records.map((r) => r.metrics[name]?.value);

// ---- messages (docs/tutorials/anthropic-messages-endpoint.md) ----

test('messages, non-streaming: 20 requests to /v1/messages with x-api-key, latency but no TTFT', async () => {
  const run = await runDocCommand(`aiperf profile \\
    --model claude-sonnet-4-20250514 \\
    --endpoint-type messages \\
    --url https://api.anthropic.com \\
    --api-key $ANTHROPIC_API_KEY \\
    --request-count 20 \\
    --concurrency 4`);
  assertCompleted(run, 20);
  for (const r of run.requests) {
    assert.equal(r.path, '/v1/messages');
    assert.equal(r.headers['x-api-key'], 'test-key');
    assert.equal(r.headers['anthropic-version'], '2023-06-01');
    assert.equal(r.headers.authorization, undefined);
  }
  for (const body of bodies(run)) {
    assert.equal(body.stream, false);
    assert.equal(body.max_tokens, 1024);
  }
  assert.deepEqual(new Set(metric(run, 'output_sequence_length')), new Set([1024]));
  assert.deepEqual(metric(run, 'time_to_first_token'), new Array(20).fill(undefined));
  assert.ok(metric(run, 'request_latency').every((v) => typeof v === 'number' && v > 0));
});

test('messages, streaming with synthetic lengths: 50 requests, TTFT and ITL, usage from the events', async () => {
  const run = await runDocCommand(`aiperf profile \\
    --model claude-sonnet-4-20250514 \\
    --endpoint-type messages \\
    --streaming \\
    --synthetic-input-tokens-mean 500 \\
    --synthetic-input-tokens-stddev 50 \\
    --output-tokens-mean 200 \\
    --output-tokens-stddev 20 \\
    --url https://api.anthropic.com \\
    --api-key $ANTHROPIC_API_KEY \\
    --request-count 50 \\
    --concurrency 8`);
  assertCompleted(run, 50);
  const sent = bodies(run);
  for (const [i, r] of run.records.entries()) {
    const body = sent.find((b) => b.max_tokens === r.metrics.output_sequence_length?.value);
    assert.ok(body !== undefined, `record ${i}: an OSL equal to a max_tokens sent`);
    assert.equal(typeof r.metrics.time_to_first_token?.value, 'number');
    assert.equal(typeof r.metrics.inter_token_latency?.value, 'number');
    assert.equal(r.metrics.usage_prompt_tokens?.value, r.metrics.input_sequence_length?.value);
    assert.equal(r.metrics.usage_completion_tokens?.value, r.metrics.output_sequence_length?.value);
  }
  assert.ok(sent.every((b) => b.stream === true && typeof b.max_tokens === 'number'));
});

test('messages with a shared system prompt: 20 requests, no system-role message', async () => {
  const run = await runDocCommand(`aiperf profile \\
    --model claude-sonnet-4-20250514 \\
    --endpoint-type messages \\
    --shared-system-prompt-length 100 \\
    --url https://api.anthropic.com \\
    --api-key $ANTHROPIC_API_KEY \\
    --request-count 20`);
  assertCompleted(run, 20);
  // tokenload's synthetic shared system prompt starts the first user message (docs/aiperf.md), so
  // there is no system message to move to the top-level `system` field.
  for (const body of bodies(run)) {
    assert.ok((body.messages as Array<{ role: string }>).every((m) => m.role !== 'system'));
  }
});

test('messages with --header and --extra-inputs: the header beside the defaults, the inputs in the body', async () => {
  const run = await runDocCommand(`aiperf profile \\
    --model claude-sonnet-4-20250514 \\
    --endpoint-type messages \\
    --extra-inputs temperature:0.7 \\
    --extra-inputs top_p:0.9 \\
    --header anthropic-beta:extended-thinking-2025-04-11 \\
    --url https://api.anthropic.com \\
    --api-key $ANTHROPIC_API_KEY`);
  assertCompleted(run, 10); // no --request-count: max(10, 2 × concurrency 1)
  for (const r of run.requests) assert.equal(r.headers['anthropic-beta'], 'extended-thinking-2025-04-11');
  for (const body of bodies(run)) assert.deepEqual([body.temperature, body.top_p], [0.7, 0.9]);
});

test('messages multi-turn file: the 2 sessions of 2 turns cycled to 10 requests, each second turn carrying the first answer', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
    --model claude-sonnet-4-20250514 \\
    --endpoint-type messages \\
    --input-file conversations.jsonl \\
    --custom-dataset-type multi_turn \\
    --streaming \\
    --url https://api.anthropic.com \\
    --api-key $ANTHROPIC_API_KEY \\
    --concurrency 2`,
    {
      'conversations.jsonl':
        '{"session_id": "s1", "turns": [{"text": "What is Rust?"}, {"text": "Compare it to C++."}]}\n' +
        '{"session_id": "s2", "turns": [{"text": "Explain async/await."}, {"text": "Show a Python example."}]}\n',
    },
  );
  // No --request-count: AIPerf's default, max(10, 2 × concurrency 2) = 10 requests, the file's
  // sessions cycled; where the count cuts the last sessions depends on which turns finish first.
  assertCompleted(run, 10);
  const sizes = bodies(run).map((b) => (b.messages as unknown[]).length);
  assert.deepEqual(new Set(sizes), new Set([1, 3]));
  const second = bodies(run).filter((b) => (b.messages as unknown[]).length === 3);
  for (const body of second) {
    const [, answer] = body.messages as Array<{ role: string; content: string }>;
    assert.equal(answer?.role, 'assistant');
    assert.notEqual(answer?.content, '');
  }
});

test('messages with --use-server-token-count --tokenizer builtin: token counts are the server usage', async () => {
  const run = await runDocCommand(`aiperf profile \\
    --model claude-sonnet-4-20250514 \\
    --endpoint-type messages \\
    --use-server-token-count \\
    --tokenizer builtin \\
    --streaming \\
    --url https://api.anthropic.com \\
    --api-key $ANTHROPIC_API_KEY`);
  assertCompleted(run, 10);
  assert.deepEqual(new Set(metric(run, 'output_sequence_length')), new Set([1024]));
});

// ---- rankings (docs/tutorials/rankings.md) ----

const RANKINGS_JSONL = [0, 1, 2, 3, 4]
  .map(
    (i) =>
      `{"texts":[{"name":"query","contents":["What is AI topic ${i}?"]},{"name":"passages","contents":["AI passage ${i}"]}]}`,
  )
  .join('\n');

test('hf_tei_rankings with custom inputs: 10 requests to /rerank with query and texts, latency only', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
    -m BAAI/bge-reranker-base \\
    --endpoint-type hf_tei_rankings \\
    --url localhost:8080 \\
    --input-file ./rankings.jsonl \\
    --custom-dataset-type single_turn \\
    --request-count 10`,
    { 'rankings.jsonl': `${RANKINGS_JSONL}\n` },
  );
  assertCompleted(run, 10);
  const sent = bodies(run);
  assert.ok(run.requests.every((r) => r.path === '/rerank'));
  assert.deepEqual(sent[0], { query: 'What is AI topic 0?', texts: ['AI passage 0'] });
  assert.deepEqual(metric(run, 'time_to_first_token'), new Array(10).fill(undefined));
  assert.deepEqual(metric(run, 'output_sequence_length'), new Array(10).fill(0)); // no output tokens, as embeddings
  assert.ok(metric(run, 'request_latency').every((v) => typeof v === 'number' && v > 0));
  assert.ok((run.summary.request_throughput as { avg: number }).avg > 0);
});

test('cohere_rankings with custom inputs: 10 requests to /v1/rerank with model, query and documents', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
    -m BAAI/bge-reranker-v2-m3 \\
    --endpoint-type cohere_rankings \\
    --url localhost:8080 \\
    --input-file ./rankings.jsonl \\
    --custom-dataset-type single_turn \\
    --request-count 10`,
    { 'rankings.jsonl': `${RANKINGS_JSONL}\n` },
  );
  assertCompleted(run, 10);
  assert.ok(run.requests.every((r) => r.path === '/v1/rerank'));
  assert.deepEqual(bodies(run)[1], {
    model: 'BAAI/bge-reranker-v2-m3',
    query: 'What is AI topic 1?',
    documents: ['AI passage 1'],
  });
});

test('rankings with synthetic inputs: refused before anything runs, naming the file way', async () => {
  const synthetic = await runDocCommand(`aiperf profile \\
    -m BAAI/bge-reranker-v2-m3 \\
    --endpoint-type cohere_rankings \\
    --url localhost:8080 \\
    --request-count 10`);
  assert.equal(synthetic.code, 2);
  assert.match(synthetic.stderr, /synthetic rankings inputs .* not implemented .*--input-file/);
  const flags = await runDocCommand(`aiperf profile \\
    -m BAAI/bge-reranker-base \\
    --endpoint-type hf_tei_rankings \\
    --url localhost:8080 \\
    --request-count 10 \\
    --rankings-passages-mean 5 \\
    --rankings-passages-stddev 1 \\
    --rankings-passages-prompt-token-mean 32 \\
    --rankings-passages-prompt-token-stddev 8 \\
    --rankings-query-prompt-token-mean 16 \\
    --rankings-query-prompt-token-stddev 4`);
  assert.equal(flags.code, 2);
  assert.match(flags.stderr, /--rankings-passages-mean is AIPerf's option; tokenload does not take it/);
  assert.equal(flags.requests.length + synthetic.requests.length, 0);
});

// ---- image generation (docs/tutorials/image-generation.md) ----

const IMAGE_PROMPTS =
  '{"text": "A serene mountain landscape at sunset"}\n' +
  '{"text": "A futuristic city with flying cars"}\n' +
  '{"text": "A cute robot playing with a kitten"}\n';

test('image_generation from a file: sends 3 requests to /v1/images/generations, latency and ISL, no TTFT', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
  --model black-forest-labs/FLUX.1-dev \\
  --tokenizer builtin \\
  --url http://localhost:30000 \\
  --endpoint-type image_generation \\
  --input-file image_prompts.jsonl \\
  --custom-dataset-type single_turn \\
  --extra-inputs size:512x512 \\
  --extra-inputs quality:standard \\
  --concurrency 1 \\
  --request-count 3`,
    { 'image_prompts.jsonl': IMAGE_PROMPTS },
    { stdout: true },
  );
  assertCompleted(run, 3);
  assert.ok(run.requests.every((r) => r.path === '/v1/images/generations'));
  assert.deepEqual(bodies(run)[0], {
    prompt: 'A serene mountain landscape at sunset',
    model: 'black-forest-labs/FLUX.1-dev',
    response_format: 'b64_json',
    n: 1,
    size: '512x512',
    quality: 'standard',
  });
  assert.deepEqual(
    new Set(bodies(run).map((b) => b.prompt)),
    new Set(
      IMAGE_PROMPTS.trim()
        .split('\n')
        .map((l) => JSON.parse(l).text),
    ),
  );
  assert.ok(metric(run, 'request_latency').every((v) => typeof v === 'number' && v > 0));
  assert.ok(metric(run, 'input_sequence_length').every((v) => typeof v === 'number' && v > 0));
  assert.deepEqual(metric(run, 'time_to_first_token'), [undefined, undefined, undefined]);
  assert.match(run.stdout, /Request Latency \(ms\)/);
});

test('image_generation with synthetic prompts: sends 3 requests, ISL near the asked 150', async () => {
  const run = await runDocCommand(`aiperf profile \\
  --model black-forest-labs/FLUX.1-dev \\
  --tokenizer builtin \\
  --url http://localhost:30000 \\
  --endpoint-type image_generation \\
  --extra-inputs size:512x512 \\
  --extra-inputs quality:standard \\
  --synthetic-input-tokens-mean 150 \\
  --synthetic-input-tokens-stddev 30 \\
  --concurrency 1 \\
  --request-count 3`);
  assertCompleted(run, 3);
  for (const body of bodies(run)) assert.ok(typeof body.prompt === 'string' && body.prompt.length > 0);
  assert.ok(metric(run, 'input_sequence_length').every((v) => typeof v === 'number' && v > 0));
});

test('image_generation with --export-level raw: profile_export_raw.jsonl holds each request and its answer', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
  --model black-forest-labs/FLUX.1-dev \\
  --tokenizer builtin \\
  --url http://localhost:30000 \\
  --endpoint-type image_generation \\
  --input-file image_prompts.jsonl \\
  --custom-dataset-type single_turn \\
  --concurrency 1 \\
  --request-count 3 \\
  --export-level raw`,
    { 'image_prompts.jsonl': IMAGE_PROMPTS },
  );
  assertCompleted(run, 3);
  const raw = readFileSync(join(run.folder, 'profile_export_raw.jsonl'), 'utf8').trim().split('\n');
  assert.equal(raw.length, 3);
  const sent = new Set(bodies(run).map((b) => b.prompt));
  for (const line of raw) {
    const r = JSON.parse(line) as { payload?: { prompt?: string } };
    assert.ok(sent.has(r.payload?.prompt), line.slice(0, 200));
  }
});

test('chat_embeddings: the messages body to /v1/embeddings, latency only', async () => {
  const run = await runDocCommand(`aiperf profile \\
  --model TIGER-Lab/VLM2Vec-Full \\
  --endpoint-type chat_embeddings \\
  --url localhost:8000 \\
  --synthetic-input-tokens-mean 50 \\
  --request-count 4`);
  assertCompleted(run, 4);
  assert.ok(run.requests.every((r) => r.path === '/v1/embeddings'));
  for (const body of bodies(run)) {
    assert.equal(body.input, undefined);
    assert.equal((body.messages as Array<{ role: string }>)[0]?.role, 'user');
  }
  assert.deepEqual(metric(run, 'output_sequence_length'), [0, 0, 0, 0]);
});

// ---- template (docs/tutorials/template-endpoint.md) ----

test('template, basic inline template: 20 requests to /custom-endpoint with {"text": …}, text answers counted', async () => {
  const run = await runDocCommand(`aiperf profile \\
  --model your-model \\
  --url http://localhost:8000/custom-endpoint \\
  --endpoint-type template \\
  --extra-inputs payload_template:'
  {
    "text": {{ text|tojson }}
  }' \\
  --synthetic-input-tokens-mean 100 \\
  --output-tokens-mean 50 \\
  --concurrency 4 \\
  --request-count 20`);
  assertCompleted(run, 20);
  assert.ok(run.requests.every((r) => r.path === '/custom-endpoint'));
  for (const body of bodies(run)) {
    assert.deepEqual(Object.keys(body), ['text']);
    assert.ok(typeof body.text === 'string' && body.text.length > 0);
  }
  assert.ok(metric(run, 'output_sequence_length').every((v) => typeof v === 'number' && v > 0));
  assert.deepEqual(metric(run, 'time_to_first_token'), new Array(20).fill(undefined));
});

test('template, custom embedding API: 100 requests to /embed with input and model, the embeddings field read', async () => {
  const run = await runDocCommand(`aiperf profile \\
  --model embedding-model \\
  --url http://localhost:8000/embed \\
  --endpoint-type template \\
  --extra-inputs payload_template:'
    {
      "input": {{ texts|tojson }},
      "model": {{ model|tojson }}
    }' \\
  --extra-inputs response_field:'embeddings' \\
  --synthetic-input-tokens-mean 50 \\
  --concurrency 8 \\
  --request-count 100`);
  assertCompleted(run, 100);
  assert.ok(run.requests.every((r) => r.path === '/embed'));
  for (const body of bodies(run)) {
    assert.equal(body.model, 'embedding-model');
    assert.ok(Array.isArray(body.input) && body.input.length === 1);
  }
  assert.deepEqual(new Set(metric(run, 'output_sequence_length')), new Set([0]));
});

test('template, named template nv-embedqa: 50 requests to /embeddings with {"text": [...]}, auto-detected', async () => {
  const run = await runDocCommand(`aiperf profile \\
  --model nv-embed-v2 \\
  --url http://localhost:8000/embeddings \\
  --endpoint-type template \\
  --extra-inputs payload_template:nv-embedqa \\
  --synthetic-input-tokens-mean 100 \\
  --concurrency 4 \\
  --request-count 50`);
  assertCompleted(run, 50);
  assert.ok(run.requests.every((r) => r.path === '/embeddings'));
  for (const body of bodies(run)) {
    assert.deepEqual(Object.keys(body), ['text']);
    assert.ok(Array.isArray(body.text) && body.text.length === 1);
  }
  assert.deepEqual(new Set(metric(run, 'output_sequence_length')), new Set([0]));
});

test('template from a file, streamed: 20 requests to /generate, stream true, generated_text read per event', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
  --model custom-llm \\
  --url http://localhost:8000/generate \\
  --endpoint-type template \\
  --extra-inputs payload_template:./chat_template.json \\
  --extra-inputs response_field:'generated_text' \\
  --streaming \\
  --synthetic-input-tokens-mean 200 \\
  --output-tokens-mean 100 \\
  --concurrency 10`,
    {
      'chat_template.json':
        '{\n  "model": {{ model|tojson }},\n  "prompt": {{ text|tojson }},\n  "max_new_tokens": {{ max_tokens|tojson }},\n  "stream": {{ stream|lower }}\n}\n',
    },
  );
  assertCompleted(run, 20); // no --request-count: max(10, 2 × concurrency 10)
  assert.ok(run.requests.every((r) => r.path === '/generate'));
  const sent = bodies(run);
  for (const body of sent) {
    assert.deepEqual(Object.keys(body), ['model', 'prompt', 'max_new_tokens', 'stream']);
    assert.equal(body.model, 'custom-llm');
    assert.equal(body.stream, true);
  }
  for (const r of run.records) {
    const osl = r.metrics.output_sequence_length?.value;
    assert.ok(
      sent.some((b) => b.max_new_tokens === osl),
      'an OSL equal to a max_new_tokens sent',
    );
    assert.equal(typeof r.metrics.time_to_first_token?.value, 'number');
    assert.equal(typeof r.metrics.inter_token_latency?.value, 'number');
  }
});

test('template with image inputs: refused before anything runs, tokenload sends text only', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
  --model vision-model \\
  --url http://localhost:8000/analyze \\
  --endpoint-type template \\
  --extra-inputs payload_template:'
    {
      "text": {{ text|tojson }},
      "image": {{ image|tojson }}
    }' \\
  --input-file ./multimodal_dataset.jsonl \\
  --concurrency 2`,
    {
      'multimodal_dataset.jsonl':
        '{"text": "What is in this image?", "image": "https://example.com/cat.png"}\n',
    },
  );
  assert.equal(run.code, 2);
  assert.match(run.stderr, /the template uses image, which tokenload cannot fill: it sends text only/);
  assert.equal(run.requests.length, 0);
});

test("template with tokenload's --workers 2: the worker threads read each answer at the run's response_field", async () => {
  // Not a doc command: response_field `id` (the simulator's request id, a short text) tells the
  // run's configured adapter apart from auto-detection (which would read the generated `text`).
  const run = await runDocCommand(`aiperf profile \\
  --model custom-llm \\
  --url http://localhost:8000/generate \\
  --endpoint-type template \\
  --extra-inputs payload_template:'{"prompt": {{ text|tojson }}, "max_tokens": {{ max_tokens|tojson }}}' \\
  --extra-inputs response_field:id \\
  --output-tokens-mean 40 \\
  --workers 2 \\
  --request-count 4`);
  assertCompleted(run, 4);
  for (const osl of metric(run, 'output_sequence_length'))
    assert.ok(typeof osl === 'number' && osl > 0 && osl < 40);
});
