/**
 * Findings of the routes beside generation: `/v1/models`, `/metrics`, `/tokenize`, and the
 * keep-alive timeout (the `Keep-Alive` header and the idle-connection watch).
 */
import { asObject, asText } from '../endpoint/parse-common.js';
import type { ExchangeResult } from './exchange.js';
import type { IdleResult } from './keep-alive.js';
import type { ProbeFindings } from './types.js';

function json(r: ExchangeResult): Record<string, unknown> | null {
  try {
    return asObject(JSON.parse(r.text));
  } catch {
    return null;
  }
}

/** `HTTP 404`, or the transport failure when there was no answer. */
export function statusText(r: ExchangeResult): string {
  return r.status === null ? `no answer (${r.failure})` : `HTTP ${r.status}`;
}

/** `GET /v1/models`: the names served, and whether `model` is one of them. */
export function modelsFinding(
  r: ExchangeResult,
  model: string,
  answered: boolean,
): ProbeFindings['models_route'] {
  const data = json(r)?.data;
  if (r.status !== 200 || !Array.isArray(data)) {
    return { value: { status: r.status, listed: null, served: [] }, text: `${statusText(r)}: no model list` };
  }
  const served = data.map((m) => asText(asObject(m)?.id)).filter((id) => id !== '');
  const listed = served.includes(model);
  const names = served.length > 5 ? `${served.slice(0, 5).join(', ')}, …` : served.join(', ');
  const verdict = listed
    ? `${model} is listed`
    : `${model} is not listed${answered ? ', yet the generation requests naming it were answered' : ''}`;
  return {
    value: { status: r.status, listed, served },
    text: `serves ${served.length} (${names}); ${verdict}`,
  };
}

/** `GET /metrics`: Prometheus text exposition, and whose metric names it uses. */
export function metricsFinding(r: ExchangeResult): ProbeFindings['metrics_route'] {
  const lines = r.status === 200 ? r.text.split('\n') : [];
  const families = lines.filter((l) => l.startsWith('# TYPE ')).length;
  const names = lines.filter((l) => l !== '' && !l.startsWith('#'));
  if (families === 0 && names.length === 0) {
    return {
      value: { status: r.status, prometheus: false, flavour: null, metric_families: 0 },
      text: `${statusText(r)}: no Prometheus metrics`,
    };
  }
  const flavour = names.some((l) => l.startsWith('vllm:'))
    ? 'vllm'
    : names.some((l) => l.startsWith('sglang:'))
      ? 'sglang'
      : 'other';
  const whose = { vllm: "vLLM's names (vllm:…)", sglang: "SGLang's names (sglang:…)", other: 'other names' }[
    flavour
  ];
  return {
    value: { status: r.status, prometheus: true, flavour, metric_families: families },
    text: `Prometheus text, ${families} metric families, ${whose}`,
  };
}

/** `POST /tokenize`: the server's own count of the probe text beside the client's. */
export function tokenizeFinding(r: ExchangeResult, clientTokens: number): ProbeFindings['tokenize_route'] {
  const body = r.status === 200 ? json(r) : null;
  const tokens = body?.tokens;
  const count = typeof body?.count === 'number' ? body.count : Array.isArray(tokens) ? tokens.length : null;
  const maxLen = typeof body?.max_model_len === 'number' ? body.max_model_len : null;
  const value = { status: r.status, count, client_tokens: clientTokens, max_model_len: maxLen };
  if (count === null) return { value, text: `${statusText(r)}: not served` };
  const client =
    count === clientTokens ? 'as the client tokenizer does' : `the client tokenizer ${clientTokens}`;
  const len = maxLen === null ? '' : `; max_model_len ${maxLen}`;
  return { value, text: `the server counts the probe text as ${count} tokens, ${client}${len}` };
}

function headerTimeoutS(header: string | null): number | null {
  const m = /timeout\s*=\s*(\d+)/i.exec(header ?? '');
  return m === null ? null : Number(m[1]);
}

/** The `Keep-Alive` header of the models answer, and what the idle watch saw. */
export function keepAliveFinding(
  r: ExchangeResult,
  idle: IdleResult | null,
  idleS: number,
): ProbeFindings['keep_alive'] {
  const header = r.headers['keep-alive'] ?? null;
  const value = {
    header,
    header_timeout_s: headerTimeoutS(header),
    idle_watched_s: idleS,
    closed_after_s: null,
  };
  const said = header === null ? 'no Keep-Alive header' : `Keep-Alive: ${header}`;
  if (idle === null) return { value, text: `${said}; idle connection not watched` };
  if (idle.error !== null) return { value, text: `${said}; idle watch failed: ${idle.error}` };
  if (idle.closedAfterS === null)
    return { value, text: `${said}; an idle connection was still open after ${idleS} s` };
  const closed = { ...value, closed_after_s: idle.closedAfterS };
  if (idle.closedAfterS < 0.5)
    return { value: closed, text: `${said}; the server closed the connection right after the answer` };
  return {
    value: closed,
    text: `${said}; the server closed an idle connection after ${idle.closedAfterS} s`,
  };
}
