/**
 * MSER-5 warm-up truncation (White 1997, "An effective truncation heuristic for bias reduction in
 * simulation output", Simulation 69(6); White, Cobb & Spratt 2000, Proc. Winter Simulation
 * Conference): the series is cut into batches of 5 and their means z_1…z_m; for each truncation d the
 * marginal standard error is MSER(d) = Σ_{j>d} (z_j − z̄_d)² / (m − d)², and the chosen d minimizes it.
 * d is searched over the first half only: past it the few batches left make the statistic unstable
 * (a short quiet stretch at the end would win). A minimum at the half-way bound means the series
 * was still moving there (a rising series' statistic falls with every batch dropped), White's "not
 * enough data to settle": the caller gets `settled: false`.
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
  return { truncate: bestD * MSER_BATCH, settled: bestD < half };
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
