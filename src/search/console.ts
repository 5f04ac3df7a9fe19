/**
 * What `tokenload search` prints: a table of the probes, one row as each finishes (fixed column
 * widths, so the rows line up without reprinting), and the answer at the end.
 */
import Table from 'cli-table3';
import { slaUnit } from './config.js';
import type { HistoryIteration, HistorySla, SearchHistory } from './history-types.js';
import type { Breach, Sla } from './types.js';

const UNIT_OF_AXIS: Record<string, string> = {
  request_rate: 'req/s',
  concurrency: '',
  synthesis_speedup_ratio: '×',
};
const NAME_OF_AXIS: Record<string, string> = {
  request_rate: 'request rate',
  concurrency: 'concurrency',
  synthesis_speedup_ratio: 'speedup',
};

/** A number for reading: 3 significant digits past 1, more below. */
function fmt(v: number | null | undefined): string {
  if (v === null || v === undefined) return '–';
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(1) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

/** A load with its unit: `37.5 req/s`, `12`, `4.2×`. */
export function loadText(swept: string, load: number | null | undefined): string {
  const unit = UNIT_OF_AXIS[swept] ?? '';
  return `${fmt(load)}${unit === '×' ? '×' : unit === '' ? '' : ` ${unit}`}`;
}

const COLUMN_WIDTH = {
  probe: 7,
  load: 14,
  phase: 9,
  status: 16,
  sla: 30,
  client: 11,
  server: 12,
  folder: 10,
};

const STYLE = {
  chars: {
    top: '',
    'top-mid': '',
    'top-left': '',
    'top-right': '',
    bottom: '',
    'bottom-mid': '',
    'bottom-left': '',
    'bottom-right': '',
    left: '',
    'left-mid': '',
    mid: '',
    'mid-mid': '',
    right: '',
    'right-mid': '',
    middle: ' ',
  },
  style: { head: [], border: [], 'padding-left': 0, 'padding-right': 1 },
};

function widths(slas: readonly Sla[]): number[] {
  const w = COLUMN_WIDTH;
  return [w.probe, w.load, w.phase, w.status, ...slas.map(() => w.sla), w.client, w.server, w.folder];
}

function render(slas: readonly Sla[], row: string[]): string {
  const table = new Table({ ...STYLE, colWidths: widths(slas), wordWrap: true });
  table.push(row);
  return table.toString();
}

/** The table's header line, printed once before the first probe. */
export function tableHeader(slas: readonly Sla[]): string {
  const slaHeads = slas.map((s) => `${s.metric_tag}:${s.stat} ${s.op} ${fmt(s.threshold)}`);
  return render(slas, ['probe', 'load', 'phase', 'status', ...slaHeads, 'client', 'server', 'folder']);
}

function slaCell(s: HistorySla): string {
  const unit = slaUnit(s.metric_tag) === 'ms' ? ' ms' : '';
  const interval = s.interval === null ? '' : ` [${fmt(s.interval.low)}, ${fmt(s.interval.high)}]`;
  return `${s.passed ? '✓' : '✗'} ${fmt(s.observed)}${unit}${interval}`;
}

/** One probe's row. */
export function tableRow(history: SearchHistory, it: HistoryIteration): string {
  const swept = history.config.swept_dim_path;
  const status = it.attainment === null ? it.status : `${it.status} (${fmt(it.attainment.fraction)} good)`;
  return render(history.config.sla_filters, [
    String(it.iteration_idx + 1),
    loadText(swept, it.load),
    it.phase,
    status,
    ...it.slas.map(slaCell),
    it.client_health.status,
    it.server_verdict?.status ?? '–',
    it.folder,
  ]);
}

/** A breach as a clause: `time_to_first_token p95 612.3 ≥ lt 500`. */
export function breachText(b: Breach | null): string {
  if (b === null) return 'failed';
  if (b.metric_tag === 'server_verdict') return 'server overloaded';
  const unit = typeof b.threshold === 'number' && slaUnit(b.metric_tag) === 'ms' ? ' ms' : '';
  const observed = typeof b.observed === 'number' ? fmt(b.observed) : String(b.observed);
  return `${b.metric_tag} ${b.stat} ${observed}${unit} (needs ${b.op} ${b.threshold}${unit})`;
}

/**
 * The search's answer in a few lines: what was found (or why there is no answer), the fit, the
 * caveats, then the binding SLO, the probes used, why it stopped and the wall time.
 */
export function answerText(history: SearchHistory, wallS: number): string {
  const b = history.boundary_summary;
  const lines = [
    history.client_limit === null ? boundaryLine(history) : `no answer: ${history.client_limit.message}`,
  ];
  if (history.client_limit !== null && (b.feasible_max !== null || b.infeasible_min !== null))
    lines.push(`before it: ${boundaryLine(history)}`);
  if (b.fitted_boundary !== null)
    lines.push(
      `fitted boundary (a smooth estimate, not a measured pass): ${loadText(b.swept_dim_path, b.fitted_boundary)}`,
    );
  if (b.confirmed === false)
    lines.push(
      'not sure at 95 %: an end of the boundary has an interval that straddles its SLO (more requests per probe, or --num-profile-runs, narrow it)',
    );
  if (b.non_monotonic)
    lines.push(
      'an SLO got better with more load somewhere in the range (a cold cache, a warm-up?): the fit pooled those loads',
    );
  const judged = history.iterations.filter((it) => it.status !== 'interrupted').length;
  lines.push(
    `binding SLO: ${b.binding_constraint ?? '–'}; probes: ${judged} of ${history.config.max_probes}; stopped: ${history.convergence_reason ?? 'interrupted'}; wall time ${wallS.toFixed(1)} s`,
  );
  return lines.join('\n');
}

/** The boundary as one line: the largest pass, the first fail and its breach, the type and resolution. */
function boundaryLine(history: SearchHistory): string {
  const b = history.boundary_summary;
  const swept = b.swept_dim_path;
  const name = NAME_OF_AXIS[swept] ?? swept;
  const folder = (i: number): string => history.iterations[i]?.folder ?? '?';
  const { lo, hi } = history.config.range;
  if (b.boundary_type === 'all-fail')
    return `no ${name} in the range met the SLOs: the low end ${loadText(swept, lo)} failed: ${breachText(b.infeasible_min?.first_breach ?? null)} — all-fail (the boundary lies below the range)`;
  const pass =
    b.feasible_max === null
      ? `no ${name} met the SLOs yet`
      : `largest ${name} meeting the SLOs: ${loadText(swept, b.feasible_max.value)} (${folder(b.feasible_max.iteration_idx)})`;
  if (b.boundary_type === 'none-in-range')
    return `${pass}: the top of the range passed — none-in-range (the boundary lies above ${loadText(swept, hi)})`;
  const fail =
    b.infeasible_min === null
      ? 'no probe has failed yet'
      : `${loadText(swept, b.infeasible_min.value)} failed: ${breachText(b.infeasible_min.first_breach)} (${folder(b.infeasible_min.iteration_idx)})`;
  const gap = b.relative_gap === null ? '' : `, resolution ${(100 * b.relative_gap).toFixed(1)} %`;
  return `${pass}; ${fail} — ${b.boundary_type ?? 'unfinished'}${gap}`;
}
