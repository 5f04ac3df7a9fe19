/**
 * Deterministic downsampling: charts draw at most a fixed number of points, picked at evenly spaced
 * positions of the input order, so the same run always yields the same picture.
 */

/** Most points one chart series draws; above it the series is downsampled. */
export const MAX_POINTS_PER_CHART = 20_000;

/**
 * Indices `floor(k · n / max)` for k = 0 … max−1, plus the last index n−1 (so a sorted series keeps
 * its maximum); all indices 0 … n−1 when `n <= max`.
 */
export function sampleIndices(n: number, max: number = MAX_POINTS_PER_CHART): number[] {
  if (n <= max) return Array.from({ length: n }, (_, i) => i);
  const out: number[] = [];
  for (let k = 0; k < max - 1; k += 1) out.push(Math.floor((k * n) / (max - 1)));
  out.push(n - 1);
  return out;
}

/** `items` at {@link sampleIndices}; the same array when nothing is dropped. */
export function downsample<T>(items: readonly T[], max: number = MAX_POINTS_PER_CHART): readonly T[] {
  if (items.length <= max) return items;
  return sampleIndices(items.length, max).map((i) => items[i]!);
}

/** Subtitle note for a chart that shows `shown` of `total` points; '' when nothing was dropped. */
export function downsampleNote(shown: number, total: number): string {
  if (shown >= total) return '';
  return `downsampled: ${shown.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} points, evenly spaced`;
}
