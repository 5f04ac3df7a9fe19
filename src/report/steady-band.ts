/**
 * The steady-state window (the summary's `steady_state`) drawn as a shaded band on every chart over
 * the run's time axis, so what the window holds can be read against what happened around it.
 */
import type { SteadyState } from './analysis-types.js';
import { type ChartSpec, TIME_GROUP } from './chart-base.js';

/** A window on the time axis, s since the first request started. */
export interface TimeBand {
  fromS: number;
  toS: number;
}

/** The window's bounds in seconds since the run's first request started (`t0Ns`, epoch ns). */
export function steadyWindowS(ss: SteadyState, t0Ns: bigint): TimeBand {
  const t0 = Number(t0Ns);
  return { fromS: (ss.start_ns - t0) / 1e9, toS: (ss.end_ns - t0) / 1e9 };
}

/** Label of the band. */
export const STEADY_BAND_LABEL = 'steady state';

function bandArea(band: TimeBand): Record<string, unknown> {
  return {
    silent: true,
    itemStyle: { color: 'rgba(18, 183, 106, 0.10)' },
    label: { position: 'insideTop', color: '#067647', fontSize: 11 },
    data: [
      [
        { name: STEADY_BAND_LABEL, xAxis: Math.round(band.fromS * 1000) / 1000 },
        { xAxis: Math.round(band.toS * 1000) / 1000 },
      ],
    ],
  };
}

/**
 * `charts` with the band added (as an echarts `markArea` on the first series) to each chart of the
 * time group; the others are returned as they are.
 */
export function withSteadyBand(charts: readonly ChartSpec[], band: TimeBand): ChartSpec[] {
  return charts.map((c) => {
    const series = c.option.series;
    if (c.group !== TIME_GROUP || !Array.isArray(series) || series.length === 0) return c;
    const [first, ...rest] = series as Record<string, unknown>[];
    const option = { ...c.option, series: [{ ...first, markArea: bandArea(band) }, ...rest] };
    return { ...c, option: option as ChartSpec['option'] };
  });
}
