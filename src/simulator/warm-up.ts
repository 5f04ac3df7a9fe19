/**
 * Simulator warm-up: before the simulator reports that it listens, a throwaway fixed-mode instance
 * in the same process serves internal requests over loopback for `warmupMs`, so V8 has compiled the
 * request path (HTTP parsing, prompt tokenization, chunk framing) before the first real request.
 * A cold simulator answers its first few hundred requests several times slower; under a
 * 1,000 requests/s replay that backlog grows connections and turns the first seconds of a run into
 * a queueing artefact of the tool rather than a measurement. The throwaway instance has its own KV
 * cache and counters, so the real instance starts empty.
 */
import { Pool } from 'undici';

/** Requests kept in flight by the warm-up driver. */
const WARMUP_CONCURRENCY = 8;

/** Words of the warm-up prompts (varied, so the tokenizer runs its full path, not one cache hit). */
const WORDS = ['alpha', 'kernel', 'stream', 'token', 'prefix', 'cache', 'block', 'decode', 'batch', 'warm'];

/** One warm-up request: path and JSON body. Streaming and non-streaming, chat and completions. */
function warmRequest(model: string, i: number): { path: string; body: string } {
  const words: string[] = [];
  for (let k = 0; k < 64; k++) words.push(`${WORDS[(i + k) % WORDS.length]}${(i * 31 + k) % 997}`);
  const prompt = words.join(' ');
  const common = { model, max_tokens: 20, ignore_eos: true };
  switch (i % 4) {
    case 0:
      return {
        path: '/v1/completions',
        body: JSON.stringify({ ...common, prompt, stream: true, stream_options: { include_usage: true } }),
      };
    case 1:
      return {
        path: '/v1/chat/completions',
        body: JSON.stringify({ ...common, messages: [{ role: 'user', content: prompt }] }),
      };
    default:
      return {
        path: '/v1/chat/completions',
        body: JSON.stringify({
          ...common,
          messages: [{ role: 'user', content: prompt }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      };
  }
}

/**
 * Sends warm-up requests to `url` from {@link WARMUP_CONCURRENCY} loops until `durationMs` has
 * passed, reading every response to the end.
 * @param url base URL of the throwaway instance.
 * @param model model name it accepts.
 * @param durationMs how long to keep sending, ms.
 * @throws the first transport error (the instance is in this process, so none is expected).
 */
export async function driveWarmUp(url: string, model: string, durationMs: number): Promise<void> {
  const pool = new Pool(url, { connections: WARMUP_CONCURRENCY, pipelining: 1 });
  const endMs = performance.now() + durationMs;
  let next = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < endMs) {
      const { path, body } = warmRequest(model, next++);
      const res = await pool.request({
        path,
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      await res.body.text();
    }
  };
  try {
    await Promise.all(Array.from({ length: WARMUP_CONCURRENCY }, loop));
  } finally {
    await pool.destroy();
  }
}
