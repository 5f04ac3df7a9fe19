/**
 * Monotone fits of SLO margins against load: the pool-adjacent-violators algorithm (PAVA; Ayer et
 * al. 1955, "An empirical distribution function for sampling with incomplete information"; Barlow
 * et al. 1972, "Statistical Inference under Order Restrictions"), the weighted least-squares
 * non-increasing fit, and where a fitted curve crosses zero.
 */

/**
 * The weighted least-squares non-increasing fit of `values` (in the order given: loads ascending).
 * @param weights one per value, > 0 (a load's trial count).
 * @returns the fitted values, one per input.
 */
export function fitNonIncreasing(values: readonly number[], weights: readonly number[]): number[] {
  // Blocks of pooled neighbours: mean, weight, and how many inputs each covers.
  const means: number[] = [];
  const mass: number[] = [];
  const sizes: number[] = [];
  values.forEach((v, i) => {
    means.push(v);
    mass.push(weights[i] ?? 1);
    sizes.push(1);
    // A later block above an earlier one violates the order: pool them.
    while (means.length > 1 && (means.at(-1) as number) > (means.at(-2) as number)) {
      const w = (mass.pop() as number) + (mass.at(-1) as number);
      const m = means.pop() as number;
      const n = sizes.pop() as number;
      const at = means.length - 1;
      means[at] = ((means[at] as number) * (mass[at] as number) + m * (w - (mass[at] as number))) / w;
      mass[at] = w;
      sizes[at] = (sizes[at] as number) + n;
    }
  });
  return means.flatMap((m, b) => Array<number>(sizes[b] as number).fill(m));
}

/**
 * Where the straight line in log-load between `(lo, mLo)` and `(hi, mHi)` crosses zero, for
 * `mLo ≥ 0 > mHi`; null otherwise. Log-load, because loads are probed on a doubling grid and
 * latency curves are closer to straight there.
 */
export function zeroCrossing(lo: number, mLo: number, hi: number, mHi: number): number | null {
  if (!(mLo >= 0 && mHi < 0) || !(lo > 0 && hi > lo)) return null;
  const f = mLo / (mLo - mHi);
  return Math.exp(Math.log(lo) + f * (Math.log(hi) - Math.log(lo)));
}
