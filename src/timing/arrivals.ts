/**
 * Inter-arrival intervals for `--request-rate` (AIPerf `--arrival-pattern`):
 * - `constant`: every interval is exactly 1/rate;
 * - `poisson`: exponential intervals with mean 1/rate;
 * - `gamma`: gamma intervals with shape = `--arrival-smoothness` and mean 1/rate (vLLM `--burstiness`:
 *   shape 1 is Poisson, < 1 burstier, > 1 smoother).
 * Intervals come from a seeded generator, so a seed reproduces the arrival sequence.
 */
import { ConfigError } from '../errors.js';
import { rngFromKey } from '../util/rng.js';

/** Arrival patterns. */
export const ARRIVAL_PATTERNS = ['constant', 'poisson', 'gamma'] as const;
/** One arrival pattern name. */
export type ArrivalPattern = (typeof ARRIVAL_PATTERNS)[number];

/** A source of intervals in ns. */
export type IntervalSource = () => number;

/**
 * Interval generator for `ratePerS` requests/s; `stream` names the random stream within the seed
 * (each shard of a run draws its own: shard/shard-run.ts).
 * @throws {ConfigError} naming `--request-rate` for a rate that is not > 0, or `--arrival-smoothness`
 *   for a gamma shape that is not > 0.
 */
export function createIntervals(
  pattern: ArrivalPattern,
  ratePerS: number,
  seed: number,
  smoothness = 1,
  stream = 'arrivals',
): IntervalSource {
  if (!(ratePerS > 0)) throw new ConfigError(`--request-rate must be > 0, got ${ratePerS}`, '--request-rate');
  const meanNs = 1e9 / ratePerS;
  if (pattern === 'constant') return () => meanNs;
  const next = rngFromKey(`${seed}:${stream}`);
  const uniform = (): number => (next() + 0.5) / 4294967296;
  if (pattern === 'poisson') return () => -Math.log(uniform()) * meanNs;
  if (!(smoothness > 0))
    throw new ConfigError(`--arrival-smoothness must be > 0, got ${smoothness}`, '--arrival-smoothness');
  const normal = gaussian(uniform);
  return () => (sampleGamma(smoothness, uniform, normal) / smoothness) * meanNs;
}

/** Standard normal samples by Box–Muller. */
function gaussian(uniform: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

/**
 * Gamma(shape, 1) sample, Marsaglia & Tsang, "A simple method for generating gamma variables"
 * (ACM TOMS 2000); shapes below 1 use the boosting identity Gamma(a) = Gamma(a+1)·U^(1/a).
 */
function sampleGamma(shape: number, uniform: () => number, normal: () => number): number {
  if (shape < 1) return sampleGamma(shape + 1, uniform, normal) * uniform() ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = normal();
    const v = (1 + c * x) ** 3;
    if (v <= 0) continue;
    const u = uniform();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}
