/**
 * `profile_export_aiperf_timeslices.json`: every time slice of a `--slice-duration` run in one file
 * (AIPerf "Time Slicing", "JSON Timeslice Export"): `timeslices`, an array in time order, then the
 * redacted `input_config`. Each slice holds `timeslice_index`, its window as epoch ns (`start_ns`,
 * `end_ns`), `is_complete: false` on a last window the run ended inside (absent otherwise, as AIPerf
 * leaves it), then one key per metric tag shaped as in the summary JSON (`{unit, avg, min, …}` or
 * `{unit, avg}`), and — a tokenload addition — `error_summary` when requests of the slice failed.
 */
import type { Timeslice } from '../metrics/timeslices.js';
import { redactConfig } from '../util/redact.js';

/** File name of the time-slice JSON (AIPerf's). */
export const TIMESLICES_JSON_FILE_NAME = 'profile_export_aiperf_timeslices.json';

/** What the time-slice exporters need. */
export interface TimesliceExportContext {
  slices: readonly Timeslice[];
  /** Epoch ns of a time on the slices' clock (`Timeslice.startNs`), exact. */
  toEpochNs(ns: number): bigint;
  /** Resolved run configuration; secrets are redacted before writing. */
  inputConfig: Record<string, unknown>;
}

const BIG = '\u0000bigint:';

function sliceObject(slice: Timeslice, toEpochNs: (ns: number) => bigint): Record<string, unknown> {
  const { summary } = slice;
  return {
    timeslice_index: slice.index,
    // Epoch ns exceed 2^53: carried as text and written as bare integers (see below).
    start_ns: `${BIG}${toEpochNs(slice.startNs)}`,
    end_ns: `${BIG}${toEpochNs(slice.endNs)}`,
    ...(slice.isComplete ? {} : { is_complete: false }),
    ...summary.metrics,
    ...(summary.errorSummary.length === 0 ? {} : { error_summary: summary.errorSummary }),
  };
}

/** The time-slice JSON text (2-space indent, trailing newline); epoch ns are bare integers. */
export function renderTimeslicesJson(ctx: TimesliceExportContext): string {
  const doc = {
    timeslices: ctx.slices.map((s) => sliceObject(s, ctx.toEpochNs)),
    input_config: redactConfig(ctx.inputConfig),
  };
  const text = JSON.stringify(doc, null, 2).replace(/"\\u0000bigint:(\d+)"/g, '$1');
  return `${text}\n`;
}
