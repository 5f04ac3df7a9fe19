/**
 * Reads `--request-rate-series FILE`: AIPerf's JSON object `{"points": [{"time_s": 0, "qps": 1}, …]}`,
 * or a bare JSON list of the same points. Every point has exactly `time_s` (s) and `qps`
 * (requests/s), both finite numbers; the first is at time_s 0, time_s increases from point to point,
 * qps is >= 0 and not 0 at every point. The rate is linear between points and holds the last
 * point's qps after it (timing/rate-curve.ts).
 */
import { readFileSync } from 'node:fs';
import type { RateSeries, RateSeriesPoint } from '../timing/rate-curve.js';

/** A bad series file: the message names the file, and the point index and field at fault. */
export class RateSeriesError extends Error {
  override readonly name = 'RateSeriesError';
}

const POINT_FIELDS = ['time_s', 'qps'] as const;

/**
 * The series of `--request-rate-series`: read from the file given, or (a configuration already
 * resolved, a library caller) a series given as `{file, points}`, checked again.
 * @throws {RateSeriesError} for a file that cannot be read, is not JSON, or holds a bad point (the
 *   message: `FILE: points[2].time_s: …`).
 */
export function rateSeriesOf(value: string | { file: string; points: readonly unknown[] }): RateSeries {
  if (typeof value !== 'string') return { file: value.file, points: checkPoints(value.file, value.points) };
  return { file: value, points: checkPoints(value, listOf(value, readJson(value))) };
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const why = err instanceof Error && 'code' in err ? String(err.code) : String(err);
    throw new RateSeriesError(`${file}: cannot read it (${why})`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new RateSeriesError(`${file}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** The list of points: the object's `points`, or the bare list. */
function listOf(file: string, json: unknown): unknown[] {
  if (Array.isArray(json)) return json;
  if (json !== null && typeof json === 'object' && Array.isArray((json as { points?: unknown }).points)) {
    const extra = Object.keys(json).find((k) => k !== 'points');
    if (extra !== undefined)
      throw new RateSeriesError(`${file}: ${extra}: unknown field (the object has only "points")`);
    return (json as { points: unknown[] }).points;
  }
  throw new RateSeriesError(
    `${file}: expected {"points": [{"time_s": 0, "qps": …}, …]} or a JSON list of such points`,
  );
}

function checkPoints(file: string, list: readonly unknown[]): RateSeriesPoint[] {
  if (list.length === 0) throw new RateSeriesError(`${file}: points: the list is empty`);
  const points = list.map((p, i) => pointAt(file, p, i));
  points.forEach((p, i) => {
    const where = `${file}: points[${i}]`;
    if (i === 0 && p.time_s !== 0)
      throw new RateSeriesError(`${where}.time_s: the first point must be at time_s 0, got ${p.time_s}`);
    const before = points[i - 1];
    if (before !== undefined && !(p.time_s > before.time_s))
      throw new RateSeriesError(
        `${where}.time_s: ${p.time_s} is not after points[${i - 1}].time_s ${before.time_s} (time_s must increase)`,
      );
    if (p.qps < 0) throw new RateSeriesError(`${where}.qps: must be >= 0, got ${p.qps}`);
  });
  if (points.every((p) => p.qps === 0))
    throw new RateSeriesError(`${file}: points: every qps is 0, so nothing would be sent`);
  return points;
}

function pointAt(file: string, p: unknown, i: number): RateSeriesPoint {
  const where = `${file}: points[${i}]`;
  if (p === null || typeof p !== 'object' || Array.isArray(p))
    throw new RateSeriesError(
      `${where}: expected an object {"time_s": …, "qps": …}, got ${JSON.stringify(p)}`,
    );
  const extra = Object.keys(p).find((k) => !(POINT_FIELDS as readonly string[]).includes(k));
  if (extra !== undefined)
    throw new RateSeriesError(`${where}.${extra}: unknown field (a point has time_s and qps)`);
  const value = (field: (typeof POINT_FIELDS)[number]): number => {
    const v = (p as Record<string, unknown>)[field];
    if (v === undefined) throw new RateSeriesError(`${where}.${field}: missing`);
    if (typeof v !== 'number')
      throw new RateSeriesError(`${where}.${field}: expected a number, got ${JSON.stringify(v)}`);
    // JSON.parse reads 1e400 as Infinity, which JSON.stringify would print as null.
    if (!Number.isFinite(v)) throw new RateSeriesError(`${where}.${field}: ${v} is not a finite number`);
    return v;
  };
  return { time_s: value('time_s'), qps: value('qps') };
}
