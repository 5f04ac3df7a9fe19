/**
 * MSER-5 warm-up truncation (White 1997, "An effective truncation heuristic for bias reduction in
 * simulation output", Simulation 69(6); White, Cobb & Spratt 2000, Proc. Winter Simulation
 * Conference): the series is cut into batches of 5 and their means z_1…z_m; for each truncation d the
 * marginal standard error is MSER(d) = Σ_{j>d} (z_j − z̄_d)² / (m − d)², and the chosen d minimizes it.
 * d is searched over the first half only: past it the few batches left make the statistic unstable
 * (a short quiet stretch at the end would win). A minimum at the half-way bound means the series
 * was still moving there (a rising series' statistic falls with every batch dropped), White's "not
 * enough data to settle": the caller gets `settled: false` — unless the second half is flat (its
 * linear trend moves it less than {@link flatBand} over its length). A tail flat to within noise
 * gives a statistic whose minimum is decided by that noise and can land on the bound (measured: a
 * series held at 6.00 ± 0.02 after its ramp); it has settled, where it entered the tail's band.
 */

/** Batch size of MSER-5. */
export const MSER_BATCH = 5;

/** The truncation MSER-5 chose. */
export interface MserResult {
  /** Observations to drop from the start (a multiple of {@link MSER_BATCH}). */
  truncate: number;
  /** False when the minimum fell in the second half: the series is still changing. */
  settled: boolean;
}

/**
 * MSER-5 over `values` in time order. Fewer than 4 batches cannot be judged: no truncation, settled.
 * Trailing values that do not fill a batch are left out of the batches.
 */
export function mser5(values: readonly number[]): MserResult {
  const m = Math.floor(values.length / MSER_BATCH);
  if (m < 4) return { truncate: 0, settled: true };
  const z = batchMeans(values, m);
  const half = Math.floor(m / 2);
  let sum = 0;
  let squares = 0;
  let best = Number.POSITIVE_INFINITY;
  let bestD = 0;
  // Suffix sums from the end: at step d they hold batches d…m−1.
  for (let d = m - 1; d >= 0; d--) {
    const v = z[d] as number;
    sum += v;
    squares += v * v;
    if (d > half) continue;
    const k = m - d;
    const score = Math.max(0, squares - (sum * sum) / k) / (k * k);
    if (score <= best) {
      best = score;
      bestD = d;
    }
  }
  if (bestD < half) return { truncate: bestD * MSER_BATCH, settled: true };
  const entered = flatTailStart(z, half);
  return entered === null
    ? { truncate: bestD * MSER_BATCH, settled: false }
    : { truncate: entered * MSER_BATCH, settled: true };
}

/**
 * The half-width of the band a flat tail stays in: 3 standard deviations of its batch means about
 * their trend line, or 1 % of its mean, whichever is wider.
 */
function flatBand(tail: readonly number[]): { mean: number; band: number; rise: number } {
  const n = tail.length;
  const meanX = (n - 1) / 2;
  const mean = tail.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (i - meanX) * ((tail[i] as number) - mean);
    sxx += (i - meanX) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  let residual = 0;
  for (let i = 0; i < n; i++) residual += ((tail[i] as number) - mean - slope * (i - meanX)) ** 2;
  const sd = Math.sqrt(residual / Math.max(1, n - 2));
  return { mean, band: Math.max(3 * sd, 0.01 * Math.abs(mean)), rise: Math.abs(slope) * n };
}

/**
 * When batches `half`… are flat (their trend rises less than their band over them), the first batch
 * from which every later batch lies within the band about their mean; null when they still move.
 */
function flatTailStart(z: readonly number[], half: number): number | null {
  const { mean, band, rise } = flatBand(z.slice(half));
  if (rise > band) return null;
  let start = z.length;
  while (start > 0 && Math.abs((z[start - 1] as number) - mean) <= band) start--;
  return Math.min(start, half);
}

function batchMeans(values: readonly number[], m: number): number[] {
  const z: number[] = [];
  for (let j = 0; j < m; j++) {
    let s = 0;
    for (let i = 0; i < MSER_BATCH; i++) s += values[j * MSER_BATCH + i] as number;
    z.push(s / MSER_BATCH);
  }
  return z;
}
