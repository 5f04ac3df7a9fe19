/**
 * What the report (and the console, before its table) says first: how the run ended when it did not
 * complete, the load it ran, the tokenizer that counted its tokens, whether the client kept up (the
 * `client_health` verdict) and what the server did with the load (`server_verdict`), the
 * connections, the start-up split and the usage check. The lines the console prints are the
 * console's, word for word, read back from the summary JSON (the console's own text comes from here
 * or from the same functions).
 */

import { statusLeadLine } from '../export/run-status.js';
import { clientHealthLine } from '../health/monitor.js';
import { perTurnLine } from '../metrics/per-turn.js';
import { startUpLine } from '../metrics/start-up.js';
import { usageCheckLine } from '../metrics/usage-check.js';
import { describeTokenizer, type TokenizerSection } from '../prompt/tokenizer-source.js';
import type { ServerVerdict } from './analysis-types.js';
import { escapeHtml } from './html-text.js';
import type { ConnectionsFacts, RunSummary } from './types.js';

/** The console line of the load, e.g. `Load: request rate 50/s` (its text: `LoadStrategy.describe()`). */
export function loadLine(description: string): string {
  return `Load: ${description}`;
}

/** The console line of the tokenizer, e.g. `Tokenizer: org/name from the Hugging Face cache /…; chat template applied: /…`. */
export function tokenizerLine(t: TokenizerSection): string {
  const template = t.chat_template === null ? '' : `; chat template applied: ${t.chat_template}`;
  return `Tokenizer: ${describeTokenizer(t)}${template}`;
}

/** The console line of the run's connections, e.g. `Connections: 120 pre-opened (…); 3 requests waited for a new one`. */
export function connectionsLine(c: ConnectionsFacts): string {
  const opened = `${c.prewarm.opened} pre-opened (${c.prewarm.basis})`;
  const failed = c.prewarm.failed > 0 ? `, ${c.prewarm.failed} failed to open` : '';
  const waited = c.requests_on_new_connections;
  return `Connections: ${opened}${failed}; ${waited} ${waited === 1 ? 'request' : 'requests'} waited for a new connection, ${c.requests_on_open_connections} reused an open one`;
}

/** One lead line and how it is shown: `bad` for a failed run, `warn` for a verdict other than ok. */
export interface LeadLine {
  text: string;
  tone: 'plain' | 'ok' | 'warn' | 'bad';
  /** Lines listed under it (a verdict's evidence); none when absent. */
  details?: string[];
}

function statusLine(runStatus: RunSummary['runStatus']): LeadLine | null {
  const text = runStatus === null ? null : statusLeadLine(runStatus);
  if (text === null) return null;
  const bad = runStatus?.status === 'failed' || runStatus?.status === 'failed_request_threshold';
  return { text, tone: bad ? 'bad' : 'warn' };
}

/** `3.2`, `0.05`: a figure to 3 significant digits. */
function figure(value: number): string {
  return Number(value.toPrecision(3)).toLocaleString('en-US');
}

/**
 * The server verdict's line, `Server verdict: overloaded: <reason>`, with its figures (queue
 * growth, since when, the request rate at the onset) and evidence listed under it.
 */
export function serverVerdictLine(v: ServerVerdict): LeadLine {
  const facts: string[] = [];
  if (v.queue_growth_per_s !== null) facts.push(`queue growth ${figure(v.queue_growth_per_s)} requests/s`);
  if (v.since_s !== null) facts.push(`since ${figure(v.since_s)} s`);
  if (v.onset_request_rate_per_s !== null)
    facts.push(`onset at ${figure(v.onset_request_rate_per_s)} requests/s offered`);
  const details = [...(facts.length === 0 ? [] : [facts.join(', ')]), ...v.evidence];
  const tone = v.status === 'ok' ? 'ok' : v.status === 'unknown' ? 'plain' : 'warn';
  const reason = v.reason === '' ? '' : `: ${v.reason}`;
  return { text: `Server verdict: ${v.status}${reason}`, tone, details };
}

/** The usage check's line, amber when requests disagree with what was learned; null without one. */
function usageLine(summary: RunSummary): LeadLine | null {
  const text = usageCheckLine(summary.usageCheck, summary.usageUntrusted);
  if (text === null) return null;
  return { text, tone: (summary.usageCheck?.discrepant ?? 0) > 0 ? 'warn' : 'plain' };
}

/**
 * The lead lines of a run's summary: how it ended, the load, the tokenizer, the client and server
 * verdicts, connections, start-up, by turn, then the usage check (the console prints it after its table);
 * empty without a summary.
 */
export function leadLines(summary: RunSummary | null): LeadLine[] {
  if (summary === null) return [];
  const out: LeadLine[] = [];
  const status = statusLine(summary.runStatus);
  if (status !== null) out.push(status);
  if (summary.load !== null) out.push({ text: loadLine(summary.load.description), tone: 'plain' });
  if (summary.tokenizer !== null) out.push({ text: tokenizerLine(summary.tokenizer), tone: 'plain' });
  const health = summary.clientHealth;
  if (health !== null)
    out.push({ text: clientHealthLine(health), tone: health.status === 'ok' ? 'ok' : 'warn' });
  if (summary.serverVerdict !== null) out.push(serverVerdictLine(summary.serverVerdict));
  if (summary.connections !== null) out.push({ text: connectionsLine(summary.connections), tone: 'plain' });
  if (summary.startUp !== null) out.push({ text: startUpLine(summary.startUp), tone: 'plain' });
  const byTurn = summary.perTurn === null ? null : perTurnLine(summary.perTurn);
  if (byTurn !== null) out.push({ text: byTurn, tone: 'plain' });
  const usage = usageLine(summary);
  if (usage !== null) out.push(usage);
  return out;
}

/** One lead line as HTML (escaped), its details listed under it. */
export function leadHtml(l: LeadLine): string {
  const line = `<div class="lead ${l.tone}">${escapeHtml(l.text)}</div>`;
  if (l.details === undefined || l.details.length === 0) return line;
  const items = l.details.map((d) => `<li>${escapeHtml(d)}</li>`).join('');
  return `${line}<ul class="evidence">${items}</ul>`;
}

/** The report's first section: the lead lines; nothing when the summary has none. */
export function leadSection(summary: RunSummary | null): string {
  const lines = leadLines(summary);
  if (lines.length === 0) return '';
  return `<section id="lead">${lines.map(leadHtml).join('\n')}</section>`;
}
