/**
 * How a run ended: the summary's `run_status` and the exit code `tokenload profile` gives. A run that
 * measured nothing (no request succeeded) or stopped on an error says so here, first, instead of
 * leaving a table of absent numbers to be read as a result.
 */
import {
  EXIT_FAILED_REQUEST_THRESHOLD,
  EXIT_INTERRUPTED,
  EXIT_NO_SUCCESS,
  exitCodeOf,
  InterruptedError,
} from '../errors.js';
import type { Summary } from '../metrics/summary.js';
import type { RunStatus } from './summary-json.js';

export type { RunStatus };

/** The status of a run that completed with at least one successful request. */
export const COMPLETED: RunStatus = { status: 'completed', reason: null, exit_code: 0 };

/** Longest error message quoted in a reason, characters. */
const MESSAGE_CHARS = 200;

/** Where a cut message is whole: every failed request's line keeps the server's text as it came. */
const FULL_TEXT = 'full text in profile_export.jsonl, error.message';

/**
 * An error message quoted in a reason: its first line up to {@link MESSAGE_CHARS} characters, in
 * quotes; a message cut there (or with more lines) ends with `…` and says where it is whole.
 */
function quotedMessage(message: string): string {
  const whole = message.trim();
  const line = whole.split('\n', 1)[0]?.trim() ?? '';
  if (line.length <= MESSAGE_CHARS && line === whole) return `"${line}"`;
  return `"${line.slice(0, MESSAGE_CHARS)}…", ${FULL_TEXT}`;
}

/**
 * An error answer that says the requested model is not there: OpenAI's and vLLM's "The model `m`
 * does not exist.", the code `model_not_found`, Ollama's `model "m" not found`, "Invalid model name".
 */
const MODEL_MISSING =
  /model_not_found|\bmodel\b[^\n]{0,120}?\b(?:does not exist|not found|not exist|not served|unknown)|\b(?:invalid|unknown) model/i;

/** Where the requests of a failed run went and what the server serves (for the hint of {@link noSuccessReason}). */
export interface RequestTarget {
  /** `POST` target of the run's requests, e.g. `http://127.0.0.1:8000/v1/chat/completions`. */
  requestUrl: string;
  /** `--model`. */
  models: readonly string[];
  /** The models the servers' `/v1/models` listed before the run; null when unknown. */
  servedModels: readonly string[] | null;
}

/**
 * The hint after a 400 or 404 top error: an answer saying the model does not exist points at
 * `--model` (with the models the server lists, when known); another 404 or 405 at where the requests
 * went and which flags decide it.
 */
function hintOf(top: Summary['errorSummary'][number], target: RequestTarget): string {
  if ((top.code === 400 || top.code === 404) && MODEL_MISSING.test(top.message)) {
    const served = target.servedModels;
    const lists =
      served === null
        ? ''
        : `; the server's /v1/models lists ${served.length === 0 ? 'no model' : served.join(', ')}`;
    return `. The server says the model is not there: check --model (${target.models.join(', ')})${lists}`;
  }
  if (top.code === 404 || top.code === 405)
    return `. The requests went to POST ${target.requestUrl}: check --url (the server's address, e.g. http://host:8000; a path in it goes before the endpoint's own path) and --endpoint-type / --endpoint`;
  return '';
}

/** Why no request succeeded, with the most frequent errors and their counts, and a hint ({@link hintOf}). */
export function noSuccessReason(summary: Summary, target: RequestTarget): string {
  const failed = summary.totals.errorCount;
  if (failed === 0) return 'no request succeeded: no request was sent';
  const groups = summary.errorSummary;
  const top = groups
    .slice(0, 3)
    .map((e) => `${e.code} ${e.type} ×${e.count} (${quotedMessage(e.message)})`)
    .join('; ');
  const more =
    groups.length > 3
      ? `; ${groups.length - 3} more ${groups.length === 4 ? 'kind' : 'kinds'} in the error summary`
      : '';
  const all = failed === 1 ? 'the only request failed' : `all ${failed} requests failed`;
  const first = groups[0];
  return `no request succeeded: ${all}: ${top}${more}${first === undefined ? '' : hintOf(first, target)}`;
}

/** Inputs of {@link runStatusOf}; the {@link RequestTarget} is for the hint of {@link noSuccessReason}. */
export interface RunStatusInput extends RequestTarget {
  summary: Summary;
  interrupted: boolean;
  /** A bad trace row that stopped a streamed replay after requests were sent; null otherwise. */
  inputError: Error | null;
  /** Requests sent, warmup included (an interrupt before the first says nothing was sent). */
  issued: number;
  /** Why `--failed-request-threshold` stopped the run (run/failure-stop.ts); null or absent when it did not. */
  failureStop?: string | null;
}

/**
 * The reason of an interrupted run: with nothing sent (Ctrl-C during start-up or while waiting for
 * the model) it says so, rather than pointing at a summary of nothing.
 */
function interruptedReason(issued: number): string {
  return issued === 0
    ? 'interrupted (Ctrl-C or SIGTERM) before the first request: nothing was sent to the server, so nothing was measured'
    : 'interrupted (Ctrl-C or SIGTERM): the summary covers the requests measured before the stop';
}

const capitalized = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/**
 * The lead line (console and report, word for word) of a run that did not complete, from its
 * `run_status`: `Run failed: …` or `Interrupted …`; null for a completed run.
 */
export function statusLeadLine(status: { status: string; reason: string | null }): string | null {
  if (status.status === 'completed') return null;
  if (status.status === 'failed') return `Run failed: ${status.reason ?? 'no reason recorded'}`;
  if (status.status === 'partial') return `Partial run: ${status.reason ?? 'no reason recorded'}`;
  if (status.status === 'failed_request_threshold')
    return `Stopped early: ${status.reason ?? 'too many requests failed'}`;
  return capitalized(status.reason ?? interruptedReason(1));
}

/** The lead line of an interrupted run that sent `issued` requests (as {@link statusLeadLine} gives it). */
export function interruptedLine(issued: number): string {
  return capitalized(interruptedReason(issued));
}

/**
 * The status of a run that reached its exports: a bad trace row first (exit 1), then an interrupt
 * (130), then `--failed-request-threshold` ({@link EXIT_FAILED_REQUEST_THRESHOLD}), then no
 * successful request ({@link EXIT_NO_SUCCESS}), else completed (0).
 */
export function runStatusOf(input: RunStatusInput): RunStatus {
  if (input.inputError !== null) {
    return {
      status: 'failed',
      reason: `a bad trace row stopped the replay: ${input.inputError.message}`,
      exit_code: exitCodeOf(input.inputError),
    };
  }
  if (input.interrupted) {
    return { status: 'interrupted', reason: interruptedReason(input.issued), exit_code: EXIT_INTERRUPTED };
  }
  if (input.failureStop !== undefined && input.failureStop !== null) {
    const reason = `${input.failureStop}; no request was sent after that, the requests in flight were drained, and the summary covers every request sent`;
    return { status: 'failed_request_threshold', reason, exit_code: EXIT_FAILED_REQUEST_THRESHOLD };
  }
  if (input.summary.totals.validCount === 0) {
    return {
      status: 'failed',
      reason: noSuccessReason(input.summary, input),
      exit_code: EXIT_NO_SUCCESS,
    };
  }
  return COMPLETED;
}

/**
 * The status of a run stopped by `err` after it had started (before or while it measured):
 * `interrupted` (130) for Ctrl-C during a start-up step it cannot go on without
 * ({@link InterruptedError}), else `failed`.
 */
export function failedStatus(err: unknown): RunStatus {
  if (err instanceof InterruptedError) {
    const reason = `interrupted (Ctrl-C or SIGTERM) during start-up, before anything was sent: ${err.message}`;
    return { status: 'interrupted', reason, exit_code: EXIT_INTERRUPTED };
  }
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return { status: 'failed', reason: `the run stopped on an error: ${message}`, exit_code: exitCodeOf(err) };
}
