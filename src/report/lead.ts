/**
 * What the report (and the console, before its table) says first: how the run ended when it did not
 * complete, the load it ran, and whether the client kept up (the `client_health` verdict). The
 * report's lines are the console's, word for word, read back from the summary JSON.
 */

import { statusLeadLine } from '../export/run-status.js';
import { clientHealthLine } from '../health/monitor.js';
import { escapeHtml } from './html-text.js';
import type { RunSummary } from './types.js';

/** The console line of the load, e.g. `Load: request rate 50/s` (its text: `LoadStrategy.describe()`). */
export function loadLine(description: string): string {
  return `Load: ${description}`;
}

/** One lead line and how it is shown: `bad` for a failed run, `warn` for a verdict other than ok. */
export interface LeadLine {
  text: string;
  tone: 'plain' | 'ok' | 'warn' | 'bad';
}

function statusLine(runStatus: RunSummary['runStatus']): LeadLine | null {
  const text = runStatus === null ? null : statusLeadLine(runStatus);
  if (text === null) return null;
  const bad = runStatus?.status === 'failed' || runStatus?.status === 'failed_request_threshold';
  return { text, tone: bad ? 'bad' : 'warn' };
}

/** The lead lines of a run's summary, in the console's order; empty without a summary. */
export function leadLines(summary: RunSummary | null): LeadLine[] {
  if (summary === null) return [];
  const out: LeadLine[] = [];
  const status = statusLine(summary.runStatus);
  if (status !== null) out.push(status);
  if (summary.load !== null) out.push({ text: loadLine(summary.load.description), tone: 'plain' });
  const health = summary.clientHealth;
  if (health !== null)
    out.push({ text: clientHealthLine(health), tone: health.status === 'ok' ? 'ok' : 'warn' });
  return out;
}

/** The report's first section: the lead lines; nothing when the summary has none. */
export function leadSection(summary: RunSummary | null): string {
  const lines = leadLines(summary);
  if (lines.length === 0) return '';
  const items = lines.map((l) => `<div class="lead ${l.tone}">${escapeHtml(l.text)}</div>`).join('\n');
  return `<section id="lead">${items}</section>`;
}
