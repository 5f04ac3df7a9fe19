/**
 * The simulator never emits a token before it is due, and its ground-truth end is the actual end of
 * the response. Node timers can fire up to ~1 ms before their target; an early token would make a
 * fixed-mode TTFT or ITL shorter than configured, and an end stamped at a planned time still in the
 * future made a closed loop of 3 look like 4 requests open at once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startSimulator } from '../../src/simulator/server.js';

interface TruthLine {
  arrival_ns: string;
  first_token_write_ns: string | null;
  chunk_write_ns: string[];
  end_ns: string | null;
}

const TTFT_MS = 4;
const ITL_MS = 3;
const TOKENS = 6;

async function postStream(url: string): Promise<void> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'm',
      stream: true,
      max_tokens: TOKENS,
      ignore_eos: true,
      messages: [{ role: 'user', content: 'when is each token due' }],
    }),
  });
  await res.text();
}

test('fixed mode: token i is written no earlier than arrival + TTFT + i·ITL; the end follows the last write', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-simtiming-'));
  const truthPath = join(dir, 'truth.jsonl');
  const sim = await startSimulator({
    mode: 'fixed',
    ttftMs: TTFT_MS,
    itlMs: ITL_MS,
    groundTruthLog: truthPath,
  });
  try {
    // Several at once, so timers are set from a busy loop whose cached time lags.
    for (let round = 0; round < 4; round++)
      await Promise.all(Array.from({ length: 6 }, () => postStream(sim.url)));
  } finally {
    await sim.close();
  }
  const lines = readFileSync(truthPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TruthLine);
  assert.equal(lines.length, 24);
  for (const t of lines) {
    const arrival = BigInt(t.arrival_ns);
    assert.equal(t.chunk_write_ns.length, TOKENS);
    t.chunk_write_ns.forEach((w, i) => {
      const dueNs = arrival + BigInt((TTFT_MS + i * ITL_MS) * 1e6);
      assert.ok(BigInt(w) >= dueNs, `token ${i} written ${Number(dueNs - BigInt(w)) / 1e6} ms early`);
    });
    const lastWrite = BigInt(t.chunk_write_ns[TOKENS - 1] as string);
    assert.ok(t.end_ns !== null && BigInt(t.end_ns) >= lastWrite, 'end stamped before the last token write');
  }
});
