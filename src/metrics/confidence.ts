/**
 * Statistics of one metric across repeated runs (`--num-profile-runs`): mean, sample standard
 * deviation, coefficient of variation, standard error and a Student's t confidence interval for the
 * mean, as AIPerf's multi-run aggregate reports them (its multi-run-confidence tutorial).
 */

/** One metric across runs: AIPerf's aggregate block. */
export interface AcrossRuns {
  mean: number;
  /** Sample standard deviation (n − 1 in the denominator). */
  std: number;
  min: number;
  max: number;
  /** std / mean; null when the mean is 0. */
  cv: number | null;
  /** Standard error of the mean: std / √n. */
  se: number;
  ci_low: number;
  ci_high: number;
  /** The two-sided critical value of Student's t with n − 1 degrees of freedom. */
  t_critical: number;
  unit: string;
}

/**
 * The statistics of `values` (one per run, at least 2) at confidence `level` (0 < level < 1):
 * CI = mean ± t · s/√n with t = {@link studentTQuantile}(1 − (1 − level)/2, n − 1) — the textbook
 * interval for a mean of normal observations with unknown variance (e.g. NIST/SEMATECH
 * e-Handbook of Statistical Methods, §7.2.2.1).
 * @throws {RangeError} for fewer than 2 values.
 */
export function acrossRuns(values: readonly number[], level: number, unit: string): AcrossRuns {
  const n = values.length;
  if (n < 2) throw new RangeError('a confidence interval needs at least 2 values');
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const std = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1));
  const se = std / Math.sqrt(n);
  const t = studentTQuantile(1 - (1 - level) / 2, n - 1);
  return {
    mean,
    std,
    min: Math.min(...values),
    max: Math.max(...values),
    cv: mean === 0 ? null : std / mean,
    se,
    ci_low: mean - t * se,
    ci_high: mean + t * se,
    t_critical: t,
    unit,
  };
}

/**
 * The p-quantile (0.5 ≤ p < 1) of Student's t distribution with `df` degrees of freedom, found by
 * bisection on {@link studentTCdf} to 1e-12 (e.g. 2.7764 for p = 0.975, df = 4).
 */
export function studentTQuantile(p: number, df: number): number {
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * P(T ≤ t) for Student's t with `df` degrees of freedom, t ≥ 0: 1 − I_x(df/2, 1/2) / 2 with
 * x = df / (df + t²) (Abramowitz & Stegun 26.7.1 with 26.5.27; I is the regularized incomplete beta).
 */
export function studentTCdf(t: number, df: number): number {
  const x = df / (df + t * t);
  return 1 - incompleteBeta(x, df / 2, 0.5) / 2;
}

/**
 * The regularized incomplete beta function I_x(a, b), by its continued fraction (DLMF 8.17.22),
 * evaluated with the modified Lentz method; the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) keeps x on
 * the side where the fraction converges fast (x < (a + 1)/(a + b + 2)).
 */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(x, a, b)) / a;
  return 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/** The continued fraction of {@link incompleteBeta} (modified Lentz, 1e-15 relative). */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let h = d;
  for (let m = 1; m <= 300; m++) {
    for (const num of [
      (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m)),
      -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1)),
    ]) {
      d = 1 + num * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      if (Math.abs(c) < tiny) c = tiny;
      h *= d * c;
    }
    if (Math.abs(d * c - 1) < 1e-15) break;
  }
  return h;
}

/** ln Γ(z) for z > 0 (Lanczos approximation, g = 7, 9 coefficients; about 15 digits). */
function lnGamma(z: number): number {
  const g = 7;
  const coef = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - lnGamma(1 - z);
  const zz = z - 1;
  let sum = coef[0] as number;
  for (let i = 1; i < g + 2; i++) sum += (coef[i] as number) / (zz + i);
  const t = zz + g + 0.5;
  return 0.5 * Math.log(2 * Math.PI) + (zz + 0.5) * Math.log(t) - t + Math.log(sum);
}
