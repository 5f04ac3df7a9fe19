/**
 * Every endpoint type profiled end to end against the in-process simulator: the path and body the
 * simulator received, and what the run measured (valid records, ISL as the server counted it, OSL
 * as requested, stream metrics only when streamed).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import type { EndpointTypeName } from '../../src/endpoint/registry.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';

const ISL = 30;
const OSL = 5;

interface Outcome {
  paths: string[];
  bodies: Record<string, unknown>[];
  records: Array<{ metrics: Record<string, { value: number }>; error: unknown }>;
  serverPromptTokens: number[];
  /** The summary's warnings. */
  warnings: string[];
}

async function profileEndpoint(endpointType: EndpointTypeName, streaming: boolean): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-endpoints-'));
  const truthPath = join(dir, 'truth.jsonl');
  const sim = await startSimulator(
    { mode: 'fixed', ttftMs: 2, itlMs: 1, groundTruthLog: truthPath },
    { captureRequests: true },
  );
  const config: ProfileConfig = profileConfig({
    models: ['sim-model'],
    tokenizer: 'builtin',
    url: sim.url,
    endpointType,
    streaming,
    synthetic: { isl: ISL, osl: OSL, numDatasetEntries: 4 },
    concurrency: 2,
    requestCount: 4,
    fixedScheduleAutoOffset: false,
    randomSeed: 3,
    requestTimeoutSeconds: 30,
    artifactDir: join(dir, 'run'),
    gracePeriodSeconds: 5,
    commandLine: 'test',
    // No client warm-up: half a second of CPU a run, against a simulator of its own; nothing here is timed.
    clientWarmupMs: 0,
  });
  let captured: ReturnType<typeof sim.capturedRequests>;
  try {
    const silent = { info: () => undefined, warn: () => undefined };
    await runProfile(config, { log: silent, stopSignal: new AbortController().signal });
    captured = sim.capturedRequests();
  } finally {
    await sim.close();
  }
  const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');
  return {
    paths: captured.map((c) => c.path),
    bodies: captured.map((c) => JSON.parse(c.body) as Record<string, unknown>),
    records: lines(join(dir, 'run', 'profile_export.jsonl')).map((l) => JSON.parse(l)),
    serverPromptTokens: lines(truthPath).map(
      (l) => (JSON.parse(l) as { prompt_tokens: number }).prompt_tokens,
    ),
    warnings: (
      JSON.parse(readFileSync(join(dir, 'run', 'profile_export_aiperf.json'), 'utf8')) as {
        warnings: string[];
      }
    ).warnings,
  };
}

function checkMeasured(out: Outcome, osl: number, streamed: boolean): void {
  assert.equal(out.records.length, 4);
  assert.deepEqual(out.serverPromptTokens, [ISL, ISL, ISL, ISL]);
  for (const r of out.records) {
    assert.equal(r.error, null);
    assert.equal(r.metrics.input_sequence_length?.value, ISL);
    assert.equal(r.metrics.output_sequence_length?.value, osl);
    assert.ok((r.metrics.request_latency?.value ?? 0) > 0);
    assert.equal(r.metrics.time_to_first_token !== undefined, streamed);
  }
  // Every answer had the output length asked (none for embeddings): no warning about output lengths.
  assert.deepEqual(
    out.warnings.filter((w) => /output tokens/.test(w)),
    [],
  );
}

const CASES: Array<{ type: EndpointTypeName; streaming: boolean; path: string; osl: number }> = [
  { type: 'chat', streaming: true, path: '/v1/chat/completions', osl: OSL },
  { type: 'completions', streaming: true, path: '/v1/completions', osl: OSL },
  { type: 'responses', streaming: true, path: '/v1/responses', osl: OSL },
  { type: 'responses', streaming: false, path: '/v1/responses', osl: OSL },
  { type: 'huggingface_generate', streaming: true, path: '/generate_stream', osl: OSL },
  { type: 'huggingface_generate', streaming: false, path: '/generate', osl: OSL },
  { type: 'embeddings', streaming: true, path: '/v1/embeddings', osl: 0 },
];

for (const c of CASES) {
  test(`${c.type} (${c.streaming ? 'streamed' : 'not streamed'}): ${c.path}, valid records, exact ISL/OSL`, async () => {
    const out = await profileEndpoint(c.type, c.streaming);
    assert.deepEqual(out.paths, [c.path, c.path, c.path, c.path]);
    checkMeasured(out, c.osl, c.streaming && c.type !== 'embeddings');
  });
}

test('request bodies follow each API: Responses input/max_output_tokens, TGI inputs/parameters, embeddings input', async () => {
  const responses = (await profileEndpoint('responses', true)).bodies[0];
  assert.deepEqual(Object.keys(responses ?? {}).sort(), ['input', 'max_output_tokens', 'model', 'stream']);
  assert.equal(responses?.max_output_tokens, OSL);
  const tgi = (await profileEndpoint('huggingface_generate', true)).bodies[0];
  assert.deepEqual(tgi?.parameters, { max_new_tokens: OSL, details: true });
  assert.equal(typeof tgi?.inputs, 'string');
  const embeddings = (await profileEndpoint('embeddings', true)).bodies[0];
  assert.deepEqual(Object.keys(embeddings ?? {}).sort(), ['input', 'model']);
  assert.equal(Array.isArray(embeddings?.input) && embeddings.input.length === 1, true);
});
