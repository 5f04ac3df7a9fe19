/**
 * The console's `Tails Counting Failures` block (the summary's `tails_with_failures`): when more than
 * {@link LEAD_FAILED_FRACTION} of the requests failed it leads the console, before the table of
 * successes; below that it follows the tables only when a failure or a censored request moved one of
 * its percentiles; otherwise it is not shown.
 */
import Table from 'cli-table3';
import type { Summary } from '../metrics/summary.js';
import type { TailPercentiles, TailsWithFailures } from '../metrics/tails.js';
import { formatConsoleNumber } from './format.js';

/** Failed fraction of the requests above which the block leads the console (5 %). */
export const LEAD_FAILED_FRACTION = 0.05;

const COLUMNS = ['p50', 'p90', 'p95', 'p99'] as const;
const PLAIN_STYLE = { head: [], border: [], compact: true };

/** The block's text, and whether it goes before the usual table. */
export interface TailsBlock {
  text: string;
  leads: boolean;
}

/** A percentile cell: its value, or why it has none (`failed`; `censored` when nothing failed). */
function cell(value: number | null, section: TailsWithFailures): string {
  if (value !== null) return formatConsoleNumber(value);
  return section.failed > 0 ? 'failed' : 'censored';
}

function percent(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(1)} %`;
}

function table(section: TailsWithFailures): string {
  const t = new Table({
    head: ['Metric', ...COLUMNS],
    colAligns: ['left', ...COLUMNS.map(() => 'right' as const)],
    style: PLAIN_STYLE,
  });
  const rows: Array<[string, TailPercentiles | null]> = [
    ['Time to First Token (ms)', section.time_to_first_token],
    ['Request Latency (ms)', section.request_latency],
  ];
  for (const [label, p] of rows) if (p !== null) t.push([label, ...COLUMNS.map((c) => cell(p[c], section))]);
  return `tokenload | Tails Counting Failures\n${t.toString()}`;
}

/** `, 2 censored (in flight when the run ended)`, or '' when none was. */
function censoredPart(section: TailsWithFailures): string {
  return section.censored > 0 ? `, ${section.censored} censored (in flight when the run ended)` : '';
}

/** The lead sentence: the failed share and what it does to p95 latency. */
function leadLine(section: TailsWithFailures): string {
  const p95 = section.request_latency?.p95 ?? null;
  const shown = p95 === null ? cell(p95, section) : `${formatConsoleNumber(p95)} ms`;
  return (
    `${percent(section.failed, section.requests)} of requests failed (${section.failed} of ${section.requests}${censoredPart(section)}): ` +
    `p95 request latency counting failures is ${shown}; the table below is over successes only.`
  );
}

/**
 * The block of `summary`, or null when it is not shown (no records; few failures that moved no
 * percentile). A null percentile prints `failed` (`censored` when no request failed).
 */
export function tailsBlock(summary: Summary): TailsBlock | null {
  const tails = summary.tails;
  if (tails === undefined || tails === null) return null;
  const { section } = tails;
  if (section.failed / section.requests > LEAD_FAILED_FRACTION)
    return { text: `${leadLine(section)}\n${table(section)}`, leads: true };
  if (!tails.shifted) return null;
  const counted = `${section.failed} of ${section.requests} requests failed${censoredPart(section)}`;
  const why = `${counted}: these percentiles count them; the table above is over successes only.`;
  return { text: `${table(section)}\n${why}`, leads: false };
}
