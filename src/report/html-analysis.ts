/**
 * The report's sections that judge the run: steady state against the whole run (the summary's
 * `steady_state`), and tails that count failures (`tails_with_failures`). Each is left out when its
 * section is absent from the summary. Every function returns escaped HTML.
 */
import { formatConsoleNumber } from '../export/format.js';
import type { SteadyState, TailPercentiles, TailsWithFailures, WindowMetric } from './analysis-types.js';
import { htmlTable } from './html-sections.js';
import { escapeHtml } from './html-text.js';
import { steadyWindowS } from './steady-band.js';
import type { RunData, SummaryMetric } from './types.js';

/** One compared figure of a window: a metric's statistic. */
export interface WindowFigure {
  tag: string;
  stat: 'avg' | 'p50' | 'p99';
  label: string;
}

/** The figures of the steady-state table, in order. */
export const STEADY_FIGURES: readonly WindowFigure[] = [
  { tag: 'request_throughput', stat: 'avg', label: 'Request throughput (requests/sec)' },
  { tag: 'output_token_throughput', stat: 'avg', label: 'Output token throughput (tokens/sec)' },
  { tag: 'time_to_first_token', stat: 'p50', label: 'TTFT p50 (ms)' },
  { tag: 'time_to_first_token', stat: 'p99', label: 'TTFT p99 (ms)' },
  { tag: 'inter_token_latency', stat: 'p50', label: 'ITL p50 (ms)' },
  { tag: 'inter_token_latency', stat: 'p99', label: 'ITL p99 (ms)' },
  { tag: 'request_latency', stat: 'p50', label: 'Request latency p50 (ms)' },
  { tag: 'request_latency', stat: 'p99', label: 'Request latency p99 (ms)' },
];

/** A statistic of a metric entry; undefined when absent. */
export function statOf(m: WindowMetric | SummaryMetric | undefined, stat: string): number | undefined {
  const v = (m as Record<string, unknown> | undefined)?.[stat];
  return typeof v === 'number' ? v : undefined;
}

/** `12.3`: seconds to one decimal. */
function seconds(value: number): string {
  return value.toFixed(1);
}

function windowNote(ss: SteadyState, t0Ns: bigint): string {
  const { fromS, toS } = steadyWindowS(ss, t0Ns);
  const share = Number.isFinite(ss.fraction_of_run)
    ? `${Math.round(ss.fraction_of_run * 100)} % of the run`
    : '';
  const requests = Number.isFinite(ss.requests) ? `${ss.requests.toLocaleString('en-US')} requests` : '';
  const facts = [share, requests, ss.method === '' ? '' : `method: ${ss.method}`].filter((f) => f !== '');
  const head =
    ss.fallback_reason === null
      ? `Window: ${seconds(fromS)} s to ${seconds(toS)} s after the first request (${facts.join(', ')}); shaded on the charts over time.`
      : `No steady window: ${ss.fallback_reason}. The whole run's figures stand.`;
  return `<p>${escapeHtml(head)}</p>`;
}

function littlesLawNote(ss: SteadyState): string {
  const l = ss.littles_law;
  if (l === null) return '';
  const product = l.throughput_per_s * l.mean_latency_s;
  const text =
    `Little's law in the window: mean requests in flight ${l.mean_in_flight.toFixed(2)}; ` +
    `throughput × mean latency ${l.throughput_per_s.toFixed(2)}/s × ${l.mean_latency_s.toFixed(3)} s = ${product.toFixed(2)}; ` +
    `gap ${(l.relative_gap * 100).toFixed(1)} %.`;
  const warning = l.warning === null ? '' : `<div class="warn">${escapeHtml(l.warning)}</div>`;
  return `<p class="muted">${escapeHtml(text)}</p>${warning}`;
}

/** "Steady state vs whole run": the window, the table of figures and the Little's-law check. */
export function steadyStateSection(run: RunData): string {
  const ss = run.summary?.steadyState;
  if (ss === null || ss === undefined) return '';
  const whole = run.summary?.metrics ?? {};
  const rows = STEADY_FIGURES.flatMap((f) => {
    const a = statOf(whole[f.tag], f.stat);
    const b = statOf(ss.metrics[f.tag], f.stat);
    return a === undefined && b === undefined
      ? []
      : [[f.label, formatConsoleNumber(a), formatConsoleNumber(b)]];
  });
  // Without a window the steady column would repeat the whole run: the note says why, no table.
  const table = ss.fallback_reason === null ? htmlTable(['Metric', 'whole run', 'steady state'], rows) : '';
  return `<section id="steady-state"><h2>Steady state vs whole run</h2>${windowNote(ss, run.t0Ns)}${table}${littlesLawNote(ss)}</section>`;
}

const TAIL_STATS = ['p50', 'p90', 'p95', 'p99'] as const;

/** A tail cell: the value, `failed` when the percentile falls among failed requests, `N/A` when absent. */
export function tailCell(t: TailPercentiles | null, stat: (typeof TAIL_STATS)[number]): string {
  const v = t?.[stat];
  if (v === null) return 'failed';
  return formatConsoleNumber(v);
}

function tailRows(run: RunData, tails: TailsWithFailures): string[][] {
  const metrics = run.summary?.metrics ?? {};
  const pairs = [
    ['Time to First Token (ms)', 'time_to_first_token', tails.time_to_first_token],
    ['Request Latency (ms)', 'request_latency', tails.request_latency],
  ] as const;
  return pairs.flatMap(([label, tag, t]) => [
    [`${label}, successes only`, ...TAIL_STATS.map((s) => formatConsoleNumber(statOf(metrics[tag], s)))],
    [`${label}, failures counted`, ...TAIL_STATS.map((s) => tailCell(t, s))],
  ]);
}

/**
 * Tails that count failures: each failed or cancelled request ranks as slower than any success, so a
 * percentile that falls among them reads `failed`; beside the usual percentiles over successes.
 */
export function tailsSection(run: RunData): string {
  const tails = run.summary?.tailsWithFailures;
  if (tails === null || tails === undefined) return '';
  // With nothing failed or cut off the table would only differ from the summary's by its percentile
  // method (nearest value, not interpolated), which reads as if failures had moved it.
  if (tails.failed + tails.censored === 0) return '';
  const count = (n: number) => n.toLocaleString('en-US');
  const note =
    `${count(tails.requests)} requests: ${count(tails.failed)} failed, ${count(tails.cancelled)} cancelled, ` +
    `${count(tails.censored)} still in flight at the cut-off (counted at their elapsed time). ` +
    'A failed or cancelled request counts as slower than any success; a percentile that falls among them reads "failed".';
  const table = htmlTable(['Metric', ...TAIL_STATS], tailRows(run, tails));
  return `<section id="tails"><h2>Tails with failures</h2><p>${escapeHtml(note)}</p>${table}</section>`;
}
