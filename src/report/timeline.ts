/**
 * Every request's timing in a few numbers (about 36 bytes a request, in typed-array chunks off the
 * JS heap), for what the report must count over all requests however many there are: the time bins
 * (output throughput, requests in flight, errors), the run's span and the request counts. The
 * per-request charts may draw from a sample (load-run.ts); these never do.
 *
 * Times are kept as ns offsets from the first line's start: whole numbers below 2^53, so once the
 * run's first start `t0` is known, `(offset − (t0 − base)) / 1e9` is exactly the
 * `relativeSeconds(ns, t0)` a `RequestPoint` carries.
 */
import { ValueStore } from '../metrics/value-store.js';
import type { ParsedLine } from './record-line.js';
import type { BinPoint, EveryRequest } from './types.js';

/** Every request's start, end, TTFT, output length and error type; iterable as {@link BinPoint}s. */
export class RequestTimeline implements EveryRequest {
  private base: bigint | null = null;
  private shiftNs = 0;
  private readonly startOffNs = new ValueStore();
  private readonly endOffNs = new ValueStore();
  private readonly ttftMs = new ValueStore();
  private readonly osl = new ValueStore();
  /** Index into {@link errorTypes} + 1; 0 for a success. */
  private readonly errorOf = new ValueStore();
  private readonly errorTypes: string[] = [];
  private readonly errorIndex = new Map<string, number>();
  /** Requests added. */
  count = 0;
  /** Of them, failed (cancelled included). */
  failed = 0;

  /** Adds one request. */
  add(line: ParsedLine): void {
    this.base ??= line.startNs;
    this.startOffNs.push(Number(line.startNs - this.base));
    this.endOffNs.push(Number(line.endNs - this.base));
    const { ttftMs, osl, error } = line.point;
    this.ttftMs.push(ttftMs ?? Number.NaN);
    this.osl.push(osl ?? Number.NaN);
    this.count++;
    if (error === null) {
      this.errorOf.push(0);
      return;
    }
    this.failed++;
    let index = this.errorIndex.get(error.type);
    if (index === undefined) {
      index = this.errorTypes.push(error.type);
      this.errorIndex.set(error.type, index);
    }
    this.errorOf.push(index);
  }

  /** Sets the run's first start (epoch ns), the origin of the times read back. */
  setOrigin(t0Ns: bigint): void {
    this.shiftNs = this.base === null ? 0 : Number(t0Ns - this.base);
  }

  /** Every request in the order added, as one reused {@link BinPoint} (copy what you keep). */
  *[Symbol.iterator](): Iterator<BinPoint> {
    const columns = [this.startOffNs, this.endOffNs, this.ttftMs, this.osl, this.errorOf].map((c) =>
      c.chunks(),
    );
    const point: BinPoint & { ttftMs: number | undefined; osl: number | undefined } = {
      startS: 0,
      endS: 0,
      ttftMs: undefined,
      osl: undefined,
      error: null,
    };
    const errors = this.errorTypes.map((type) => ({ type }));
    for (;;) {
      const [start, end, ttft, osl, error] = columns.map((c) => c.next());
      if (start === undefined || start.done === true) return;
      const [s, e, t, o, x] = [start, end, ttft, osl, error].map((r) => r?.value as Float64Array);
      for (let i = 0; i < (s as Float64Array).length; i++) {
        point.startS = ((s?.[i] as number) - this.shiftNs) / 1e9;
        point.endS = ((e?.[i] as number) - this.shiftNs) / 1e9;
        const ttftMs = t?.[i] as number;
        point.ttftMs = Number.isNaN(ttftMs) ? undefined : ttftMs;
        const tokens = o?.[i] as number;
        point.osl = Number.isNaN(tokens) ? undefined : tokens;
        const kind = x?.[i] as number;
        point.error = kind === 0 ? null : (errors[kind - 1] ?? null);
        yield point;
      }
    }
  }
}
