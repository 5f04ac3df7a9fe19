/**
 * Fault injection. Each request draws at most one fault from the configured rates with a seeded
 * PRNG (mulberry32), so a run with the same seed and the same arrival order injects the same faults.
 * The `x-sim-fault` request header forces one fault on one request:
 * `429`, `500`, `503`, `hang`, `slow-headers[:ms]`, `sse-error[:n]`, `truncate[:n]`, `reset[:n]`,
 * `role-chunk`, `multi-token:k`, or `none` (n = output tokens sent before the fault fires).
 */
import type { SimulatorOptions } from './options.js';

/** One injected behaviour. */
export type Fault =
  | { kind: 'none' }
  | { kind: 'status'; status: 429 | 500 | 503 }
  | { kind: 'hang' }
  | { kind: 'slow-headers'; delayMs: number }
  | { kind: 'sse-error' | 'truncate' | 'reset'; afterTokens: number }
  | { kind: 'role-chunk' }
  | { kind: 'multi-token'; tokensPerChunk: number };

/** Header that forces a fault on one request. */
export const FAULT_HEADER = 'x-sim-fault';

/** Deterministic 32-bit PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function intArg(arg: string | undefined, fallback: number): number {
  const n = arg === undefined ? Number.NaN : Number(arg);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : fallback;
}

/**
 * Parses an `x-sim-fault` header value.
 * @returns the fault, or null when the value is not recognised.
 */
export function parseFaultHeader(value: string, opts: SimulatorOptions): Fault | null {
  const [name, arg] = value.trim().toLowerCase().split(':', 2) as [string, string | undefined];
  switch (name) {
    case 'none':
      return { kind: 'none' };
    case '429':
    case '500':
    case '503':
      return { kind: 'status', status: Number(name) as 429 | 500 | 503 };
    case 'hang':
      return { kind: 'hang' };
    case 'slow-headers':
      return { kind: 'slow-headers', delayMs: intArg(arg, opts.slowHeadersMs) };
    case 'sse-error':
    case 'truncate':
    case 'reset':
      return { kind: name, afterTokens: intArg(arg, opts.faultAfterTokens) };
    case 'role-chunk':
      return { kind: 'role-chunk' };
    case 'multi-token':
      return { kind: 'multi-token', tokensPerChunk: Math.max(1, intArg(arg, 2)) };
    default:
      return null;
  }
}

/** Draws faults from the configured rates. */
export class FaultPicker {
  private readonly rand: () => number;

  constructor(private readonly opts: SimulatorOptions) {
    this.rand = mulberry32(opts.seed);
  }

  /** The fault for the next request (one PRNG draw per request, whatever the rates). */
  next(): Fault {
    const o = this.opts;
    const after = o.faultAfterTokens;
    const table: Array<[number, () => Fault]> = [
      [o.faultRate429, () => ({ kind: 'status', status: 429 })],
      [o.faultRate500, () => ({ kind: 'status', status: 500 })],
      [o.faultRate503, () => ({ kind: 'status', status: 503 })],
      [o.faultRateSseError, () => ({ kind: 'sse-error', afterTokens: after })],
      [o.faultRateTruncate, () => ({ kind: 'truncate', afterTokens: after })],
      [o.faultRateReset, () => ({ kind: 'reset', afterTokens: after })],
      [o.faultRateHang, () => ({ kind: 'hang' })],
      [o.faultRateSlowHeaders, () => ({ kind: 'slow-headers', delayMs: o.slowHeadersMs })],
    ];
    let x = this.rand();
    for (const [rate, make] of table) {
      if (x < rate) return make();
      x -= rate;
    }
    return { kind: 'none' };
  }
}
