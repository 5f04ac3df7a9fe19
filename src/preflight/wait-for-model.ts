/**
 * `--wait-for-model-timeout` (AIPerf's flag): before the first measured request, poll the server
 * every `--wait-for-model-interval` until it serves every `--model`, with a progress line, or give
 * up with {@link ServerUnreachableError} (exit 1). What "serves" means is `--wait-for-model-mode`:
 * - `models`: `GET <base>/v1/models` lists every model (a server without that route, 404, counts as
 *   serving once it answers);
 * - `inference` (default, AIPerf's): a non-streamed request of one output token per model, with the
 *   run's endpoint, headers and `--extra-inputs` (less `min_tokens`, any max set to 1), answers 2xx;
 * - `both`: the first, then the second.
 * Without a timeout (0, the default) the server is only checked once to answer at all (preflight.ts).
 * The polls happen before the first scrape of `/metrics`, so they are in no counter's delta.
 */

import { request } from 'undici';
import type { RunPlan, WaitForModelSpec } from '../config/plan.js';
import type { ChatMessage } from '../dataset/types.js';
import { adapterFor, ENDPOINTS } from '../endpoint/registry.js';
import { endpointPathFor, requestPathFor, routeUrlFor } from '../endpoint/types.js';
import { headersOf } from '../request/headers.js';
import type { RunEnv } from '../util/run-env.js';
import {
  type ProbeAnswer,
  preflight,
  ServerUnreachableError,
  servedModelsOf,
  throwFirstFailure,
} from './preflight.js';

/** One poll's verdict: served, or why not. */
interface Poll {
  ready: boolean;
  reason: string;
}

/** The longest one poll may take, ms (a loading server may hold a request). */
const POLL_TIMEOUT_MS = 30_000;

/** A progress line at least this often while the reason does not change, ms. */
const PROGRESS_EVERY_MS = 30_000;

/** What a failed request says: the error code and message. */
function failure(err: unknown): string {
  const code = (err as { code?: string }).code ?? (err as Error).name;
  return `${code}: ${(err as Error).message}`;
}

/** The path the run's requests go to (the wait polls derive their URLs as requests do). */
function runEndpointPath(config: RunPlan): string {
  return endpointPathFor(ENDPOINTS[config.endpointType], config.streaming, config.endpointPath);
}

async function modelsPoll(config: RunPlan, target: string, timeoutMs: number): Promise<Poll> {
  const url = routeUrlFor(target, '/v1/models', runEndpointPath(config));
  const res = await request(url, {
    method: 'GET',
    headers: headersOf(config),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const text = await res.body.text();
  if (res.statusCode === 404) return { ready: true, reason: `${url} answered 404 (no model list)` };
  if (res.statusCode !== 200) return { ready: false, reason: `${url} answered HTTP ${res.statusCode}` };
  const ids = servedModelsOf(text);
  if (ids === null)
    return { ready: false, reason: `${url} answered 200 with a body that is not a model list` };
  const missing = config.models.filter((m) => !ids.includes(m));
  if (missing.length === 0) return { ready: true, reason: `${url} lists ${config.models.join(', ')}` };
  return { ready: false, reason: `${url} lists ${ids.join(', ') || 'no model'}, not ${missing.join(', ')}` };
}

/**
 * `--extra-inputs` for the 1-token poll: the run's, without what would ask for more than one token
 * (`min_tokens` above 1 is a 400 from vLLM with `max_tokens` 1; an explicit max is set to 1).
 */
function pollInputs(extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...extra };
  delete out.min_tokens;
  for (const key of ['max_tokens', 'max_completion_tokens', 'max_output_tokens'])
    if (key in out) out[key] = 1;
  return out;
}

async function inferencePoll(config: RunPlan, target: string, timeoutMs: number): Promise<Poll> {
  const adapter = adapterFor(config.endpointType, { extraInputs: config.extraInputs });
  const url = `${new URL(target).origin}${requestPathFor(target, endpointPathFor(adapter, false, config.endpointPath))}`;
  const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
  for (const model of config.models) {
    const body = adapter.buildBody({
      model,
      messages,
      stream: false,
      maxTokens: 1,
      useLegacyMaxTokens: config.useLegacyMaxTokens,
      perChunkUsage: false,
      extraInputs: pollInputs(config.extraInputs),
    });
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headersOf(config) },
      body: JSON.stringify(body),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300)
      return {
        ready: false,
        reason: `${url} answered HTTP ${res.statusCode} for ${model}: ${text.slice(0, 200)}`,
      };
  }
  return { ready: true, reason: `${url} answered a 1-token request` };
}

async function poll(
  config: RunPlan,
  mode: WaitForModelSpec['mode'],
  target: string,
  timeoutMs: number,
): Promise<Poll> {
  try {
    if (mode !== 'inference') {
      const models = await modelsPoll(config, target, timeoutMs);
      if (!models.ready || mode === 'models') return models;
    }
    return await inferencePoll(config, target, timeoutMs);
  } catch (err) {
    return { ready: false, reason: `${target}: ${failure(err)}` };
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Waits until the server at `target` serves the run's models; returns early when `env.stopSignal`
 * aborts.
 * @throws {ServerUnreachableError} when the timeout passes first (the message names the flag, the
 *   URL, the number of polls and the last answer).
 */
async function waitForOne(
  config: RunPlan,
  wait: WaitForModelSpec,
  target: string,
  env: RunEnv,
): Promise<void> {
  const { timeoutS, mode } = wait;
  const intervalMs = wait.intervalS * 1000;
  const started = performance.now();
  const deadline = started + timeoutS * 1000;
  let last: Poll = { ready: false, reason: '' };
  let lastLineAt = Number.NEGATIVE_INFINITY;
  for (let polls = 1; !env.stopSignal.aborted; polls++) {
    const previous = last.reason;
    const timeoutMs = Math.max(1, Math.min(POLL_TIMEOUT_MS, deadline - performance.now()));
    last = await poll(config, mode, target, timeoutMs);
    const elapsedS = ((performance.now() - started) / 1000).toFixed(1);
    if (last.ready) {
      if (polls > 1) env.log.info(`server ready after ${elapsedS} s (${polls} polls): ${last.reason}`);
      return;
    }
    if (performance.now() >= deadline)
      throw new ServerUnreachableError(
        `--wait-for-model-timeout ${timeoutS}: ${target} did not serve ${config.models.join(', ')} within ${timeoutS} s (${polls} polls; last: ${last.reason})`,
      );
    if (last.reason !== previous || performance.now() - lastLineAt >= PROGRESS_EVERY_MS) {
      env.log.info(
        `waiting for the server to serve ${config.models.join(', ')} (${elapsedS} s of ${timeoutS} s): ${last.reason}`,
      );
      lastLineAt = performance.now();
    }
    await pause(Math.min(intervalMs, deadline - performance.now()), env.stopSignal);
  }
}

/**
 * Waits until every server of the run (`targets`, `--url` order) serves the run's models
 * (`--wait-for-model-timeout` > 0, the servers polled side by side), then checks once that each
 * answers (preflight.ts), which is all that happens with timeout 0. Returns early when
 * `env.stopSignal` aborts.
 * @returns each server's `/v1/models` probe answer, in `targets` order (empty when stopped).
 * @throws {ServerUnreachableError} when the timeout passes first for a server (the first in `--url`
 *   order, and how many more timed out), or nothing answers at all.
 */
export async function waitForServer(
  config: RunPlan,
  targets: readonly string[],
  env: RunEnv,
): Promise<ProbeAnswer[]> {
  const wait = config.waitForModel;
  if (wait !== null) {
    throwFirstFailure(await Promise.allSettled(targets.map((t) => waitForOne(config, wait, t, env))));
    if (env.stopSignal.aborted) return [];
  }
  return preflight(targets, { headers: headersOf(config), endpointPath: runEndpointPath(config) });
}
