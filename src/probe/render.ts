/**
 * The probe's console output: the findings as a two-column table (the labels below, the findings'
 * own text), the recommended flags, and the requests sent. `--json` prints {@link ProbeReport} instead.
 */
import Table from 'cli-table3';
import type { FindingKey, ProbeReport } from './types.js';

/** The table's label of each finding, in table order. */
export const FINDING_LABELS: Readonly<Record<FindingKey, string>> = {
  streaming: 'streaming',
  role_only_first_chunk: 'role-only first chunk',
  usage: 'usage (include_usage)',
  continuous_usage: 'continuous usage',
  reasoning_field: 'reasoning field',
  tokens_per_chunk: 'tokens per chunk',
  tool_call_streaming: 'tool-call streaming',
  error_format: 'error format (bad request)',
  non_streamed_usage: 'usage, not streamed',
  prefix_cache_reporting: 'cached tokens reported',
  template_overhead: 'template overhead',
  models_route: 'GET /v1/models',
  metrics_route: 'GET /metrics',
  tokenize_route: 'POST /tokenize',
  keep_alive: 'keep-alive',
};

const STYLE = { head: [], border: [], compact: true };

function findingsTable(report: ProbeReport): string {
  const table = new Table({ head: ['check', 'finding'], style: STYLE, colWidths: [28, 92], wordWrap: true });
  for (const [key, label] of Object.entries(FINDING_LABELS))
    table.push([label, report.findings[key as FindingKey].text]);
  return table.toString();
}

function requestLines(report: ProbeReport): string[] {
  return report.requests.map((r) => {
    const path = new URL(r.url).pathname;
    const status = r.status === null ? '---' : String(r.status);
    return `  ${r.name.padEnd(26)} ${r.method.padEnd(4)} ${path.padEnd(22)} ${status} ${Math.round(r.ms)
      .toString()
      .padStart(5)} ms  ${r.outcome}`;
  });
}

/** The report as the console shows it; ends with a newline. */
export function renderProbe(report: ProbeReport): string {
  const t = report.target;
  const recs =
    report.recommendations.length === 0
      ? ['  (none)']
      : report.recommendations.map((r) => `  ${r.flag ?? '(no flag)'}: ${r.reason}`);
  return [
    `tokenload | Probe of ${t.request_url} (model ${t.model}, ${t.endpoint_type}; client tokenizer ${t.tokenizer})`,
    findingsTable(report),
    'Recommended:',
    ...recs,
    `Requests (${report.requests.length}, ${(report.duration_ms / 1000).toFixed(1)} s):`,
    ...requestLines(report),
    '',
  ].join('\n');
}
