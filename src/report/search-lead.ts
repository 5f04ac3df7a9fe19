/**
 * The answer of a search, on top of its report: whether the search finished, a client that could
 * not deliver the load, the largest passing load, the first failing one and what it breached, the
 * boundary (a point, a cliff's range, none in range, all fail), the binding SLO, the fitted
 * boundary, the resolution reached, why the search stopped and the probes it used.
 */
import { type LeadLine, leadHtml } from './lead.js';
import type { SearchBoundary, SearchClientLimit, SearchHistory } from './search-history.js';
import { breachText, figure, loadText, type SearchAxisName, slaKey, slaText } from './search-text.js';

const REASONS: Record<NonNullable<SearchHistory['convergence_reason']>, string> = {
  precision_reached: 'the precision asked for was reached',
  max_probes: 'the probe budget (--search-max-probes) ran out',
  client_limited: 'the client could not deliver a probe’s load',
  all_fail: 'every load failed, down to the low end of the range',
  none_in_range: 'every load passed, up to the high end of the range',
};

function folderOf(h: SearchHistory, idx: number): string {
  const it = h.iterations.find((i) => i.iteration_idx === idx);
  return it === undefined ? '' : ` (${it.folder})`;
}

function incompleteLine(h: SearchHistory): LeadLine | null {
  if (h.convergence_reason !== null) return null;
  const n = h.iterations.length;
  return {
    tone: 'warn',
    text: `Incomplete search: the history has no convergence reason (interrupted, crashed or still running); below is the answer so far, after ${n} ${n === 1 ? 'probe' : 'probes'}.`,
  };
}

function clientLimitLine(limit: SearchClientLimit | null | undefined, axis: SearchAxisName): LeadLine | null {
  if (limit === null || limit === undefined) return null;
  const details: string[] = [];
  if (limit.requested_load !== null && limit.requested_load !== undefined)
    details.push(`requested load: ${loadText(limit.requested_load, axis)}`);
  if (limit.delivered_request_rate_per_s !== null && limit.delivered_request_rate_per_s !== undefined)
    details.push(`delivered: ${figure(limit.delivered_request_rate_per_s)} requests/s`);
  if (limit.status !== null && limit.status !== undefined) details.push(`client health: ${limit.status}`);
  if (limit.suggested_workers !== null && limit.suggested_workers !== undefined)
    details.push(`suggested: --workers ${limit.suggested_workers}`);
  return { tone: 'bad', text: `Stopped by the client, not the server: ${limit.message}`, details };
}

function passLine(h: SearchHistory, b: SearchBoundary | null): LeadLine {
  const axis = h.config.search_over;
  const max = b?.feasible_max ?? null;
  if (max === null) return { tone: 'bad', text: 'Largest load meeting every SLO: none (no load passed).' };
  const sofar = h.convergence_reason === null ? ' so far' : '';
  return {
    tone: 'ok',
    text: `Largest load meeting every SLO${sofar}: ${loadText(max.value, axis)}${folderOf(h, max.iteration_idx)}.`,
  };
}

function failLine(h: SearchHistory, b: SearchBoundary | null): LeadLine {
  const min = b?.infeasible_min ?? null;
  if (min === null)
    return { tone: 'plain', text: 'First failing load: none (no load above the passing ones failed).' };
  const breach =
    min.first_breach === null || min.first_breach === undefined ? '' : `: ${breachText(min.first_breach)}`;
  return {
    tone: 'plain',
    text: `First failing load: ${loadText(min.value, h.config.search_over)}${folderOf(h, min.iteration_idx)}${breach}.`,
  };
}

function boundaryText(h: SearchHistory, b: SearchBoundary | null): string {
  const axis = h.config.search_over;
  const max = b?.feasible_max ?? null;
  const min = b?.infeasible_min ?? null;
  const { lo, hi } = h.config.range;
  switch (b?.boundary_type ?? null) {
    case 'point':
      return `Boundary: ${max === null ? 'unknown' : loadText(max.value, axis)} (a point).`;
    case 'cliff':
      return `Boundary: a cliff between ${max === null ? '?' : loadText(max.value, axis)} and ${min === null ? '?' : loadText(min.value, axis)} (the SLO margin drops suddenly: no load in between is claimed).`;
    case 'none-in-range':
      return `Boundary: none in range: every load up to ${loadText(hi, axis)} passed; the boundary lies above.`;
    case 'all-fail':
      return `Boundary: all fail: every load probed failed, down to ${loadText(lo, axis)}.`;
    default:
      return h.convergence_reason === null
        ? 'Boundary: not known yet (the search did not finish).'
        : 'Boundary: not determined (the search stopped before it bracketed one).';
  }
}

function bindingLine(h: SearchHistory, b: SearchBoundary | null): LeadLine | null {
  const key = b?.binding_constraint ?? null;
  if (key === null) return null;
  const sla = h.config.sla_filters.find((s) => slaKey(s) === key);
  const text = sla === undefined ? key : `${slaText(sla)} (${key})`;
  return { tone: 'plain', text: `Binding SLO: ${text}.` };
}

function fitLines(h: SearchHistory, b: SearchBoundary | null): LeadLine[] {
  const out: LeadLine[] = [];
  const fitted = b?.fitted_boundary ?? null;
  if (fitted !== null)
    out.push({
      tone: 'plain',
      text: `Fitted boundary: about ${loadText(fitted, h.config.search_over)} (where a monotone fit of the binding SLO's margin crosses zero: an estimate, not a measured pass).`,
    });
  const gap = b?.relative_gap ?? null;
  if (gap !== null) {
    const asked =
      h.config.precision === undefined ? '' : ` (precision asked: ${figure(h.config.precision * 100)} %)`;
    out.push({
      tone: 'plain',
      text: `Resolution: ${figure(gap * 100)} % between the largest pass and the first fail${asked}.`,
    });
  }
  return out;
}

function caveatLines(b: SearchBoundary | null): LeadLine[] {
  const out: LeadLine[] = [];
  if (b?.confirmed === false)
    out.push({
      tone: 'warn',
      text: 'Not confirmed: the probe budget ended before both ends cleared their SLOs beyond their 95 % intervals.',
    });
  if (b?.non_monotonic === true)
    out.push({
      tone: 'warn',
      text: 'Non-monotonic: an SLO margin improved with load between neighbouring loads by more than the intervals allow (a warm-up, a cache, batching); the fit pooled them and assumes load only hurts.',
    });
  return out;
}

function stopLine(h: SearchHistory): LeadLine {
  const n = h.iterations.length;
  const budget = h.config.max_probes === undefined ? '' : ` of at most ${h.config.max_probes}`;
  const trials = (h.config.trials ?? 1) > 1 ? `, ${h.config.trials} trials per load` : '';
  const probes = `${n}${budget} ${n === 1 ? 'probe' : 'probes'}${trials}`;
  const why = h.convergence_reason === null ? 'not stopped (incomplete)' : REASONS[h.convergence_reason];
  return { tone: 'plain', text: `Stopped: ${why}; ${probes}.` };
}

/** The answer's lines, top first. */
export function searchLeadLines(h: SearchHistory): LeadLine[] {
  const b = h.boundary_summary ?? null;
  const out: (LeadLine | null)[] = [
    incompleteLine(h),
    clientLimitLine(h.client_limit, h.config.search_over),
    passLine(h, b),
    failLine(h, b),
    { tone: 'plain', text: boundaryText(h, b) },
    bindingLine(h, b),
    ...fitLines(h, b),
    ...caveatLines(b),
    stopLine(h),
  ];
  return out.filter((l): l is LeadLine => l !== null);
}

/** The report's first section, `#answer`: {@link searchLeadLines} as HTML. */
export function searchLeadSection(h: SearchHistory): string {
  return `<section id="answer"><h2>Answer</h2>${searchLeadLines(h).map(leadHtml).join('\n')}</section>`;
}
