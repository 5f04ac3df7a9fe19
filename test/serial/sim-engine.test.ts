import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startSimulator } from '../../src/simulator/server.js';

interface StreamResult {
  ttftMs: number;
  cached: number;
  promptTokens: number;
}

/** Streams one completions request with a token-id prompt; TTFT is measured at the first text chunk. */
async function stream(url: string, prompt: number[] | string, maxTokens = 2): Promise<StreamResult> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    body: JSON.stringify({
      model: 'm',
      prompt,
      stream: true,
      max_tokens: maxTokens,
      stream_options: { include_usage: true },
    }),
  });
  assert.equal(res.status, 200);
  let ttftMs = -1;
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    if (ttftMs < 0 && text.includes('"text"')) ttftMs = performance.now() - t0;
  }
  const usageLine = text.split('\n\n').find((e) => e.includes('"usage"')) ?? '';
  const usage = JSON.parse(usageLine.slice(6)).usage;
  return { ttftMs, cached: usage.prompt_tokens_details.cached_tokens, promptTokens: usage.prompt_tokens };
}

/** `n` token ids starting at `start` (distinct ranges give distinct blocks). */
const ids = (start: number, n: number): number[] => Array.from({ length: n }, (_, i) => start + i);

test('a repeated long prompt is served from the prefix cache with a lower TTFT', async () => {
  const sim = await startSimulator({ prefillMsPerToken: 0.02 });
  try {
    const prompt = ids(1000, 16_000);
    const first = await stream(sim.url, prompt);
    const second = await stream(sim.url, prompt);
    assert.equal(first.cached, 0);
    assert.equal(second.cached, 16_000 - 16, 'all but the last block (one token is always recomputed)');
    assert.ok(second.ttftMs < first.ttftMs / 2, `cached ${second.ttftMs} ms vs cold ${first.ttftMs} ms`);
  } finally {
    await sim.close();
  }
});

test('chat text prompts hit the cache too (same tokenizer as the client)', async () => {
  const sim = await startSimulator({});
  try {
    const text = Array.from({ length: 300 }, (_, i) => ` word${i % 37} and more`).join('');
    const a = await stream(sim.url, text);
    const b = await stream(sim.url, `${text} plus a different tail`);
    assert.equal(a.cached, 0);
    assert.ok(b.cached > 0 && b.cached <= a.promptTokens);
  } finally {
    await sim.close();
  }
});

test('prompts sharing only a middle block get no cached tokens', async () => {
  const sim = await startSimulator({});
  try {
    const shared = ids(5000, 16);
    await stream(sim.url, [...ids(0, 16), ...shared, ...ids(100, 16)]);
    const other = await stream(sim.url, [...ids(200, 16), ...shared, ...ids(100, 16)]);
    assert.equal(other.cached, 0);
  } finally {
    await sim.close();
  }
});

async function hitRatio(capacityBlocks: number): Promise<number> {
  const sim = await startSimulator({ cacheCapacityBlocks: capacityBlocks });
  try {
    for (let round = 0; round < 2; round++) {
      for (let p = 0; p < 10; p++) await stream(sim.url, ids(p * 10_000, 160));
    }
    return sim.stats().cache.hitRatio;
  } finally {
    await sim.close();
  }
}

test('a small cache with many distinct prompts lowers the hit ratio', async () => {
  const large = await hitRatio(10_000);
  const small = await hitRatio(30);
  assert.ok(large > 0.4, `large-cache hit ratio ${large}`);
  assert.ok(small < large / 2, `small ${small} vs large ${large}`);
});

test('--no-prefix-cache reports no cached tokens', async () => {
  const sim = await startSimulator({ prefixCache: false });
  try {
    await stream(sim.url, ids(0, 320));
    assert.equal((await stream(sim.url, ids(0, 320))).cached, 0);
  } finally {
    await sim.close();
  }
});

interface LogLine {
  arrival_ns: string;
  first_token_step_ns: string;
  batch_size_at_first_token: number;
}

async function meanStepTtftMs(
  concurrency: number,
  dir: string,
): Promise<{ ttftMs: number; maxBatch: number }> {
  const log = join(dir, `gt-${concurrency}.jsonl`);
  const sim = await startSimulator({ groundTruthLog: log });
  await Promise.all(Array.from({ length: concurrency }, (_, i) => stream(sim.url, ids(i * 100_000, 4000))));
  await sim.close();
  const lines = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LogLine);
  assert.equal(lines.length, concurrency);
  const ttfts = lines.map((l) => Number(BigInt(l.first_token_step_ns) - BigInt(l.arrival_ns)) / 1e6);
  return {
    ttftMs: ttfts.reduce((a, b) => a + b, 0) / ttfts.length,
    maxBatch: Math.max(...lines.map((l) => l.batch_size_at_first_token)),
  };
}

test('TTFT rises with offered load (server step times from the ground-truth log)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sim-engine-'));
  try {
    const one = await meanStepTtftMs(1, dir);
    const many = await meanStepTtftMs(32, dir);
    assert.ok(many.ttftMs > 3 * one.ttftMs, `32 concurrent: ${many.ttftMs} ms vs 1: ${one.ttftMs} ms`);
    assert.ok(many.maxBatch > 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
