/**
 * A full garbage collection just before the profiling phase's first request. Start-up (tokenizer,
 * dataset) and the client warm-up leave a heap full of garbage and a young generation of survivors;
 * collected during the first seconds of the run, they stop the main thread for several ms at a time
 * (scavenges of 5–9 ms in the first 2 s against ~2 ms later, `--trace-gc` of a 1,000 requests/s run),
 * exactly while the schedule is being kept. Collecting it all before time zero moves that pause out
 * of the measurement.
 *
 * Node exposes no collection call without `--expose-gc`; the flag is set at run time and the `gc`
 * function taken from a fresh context, where V8 installs it once the flag is on.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | null | undefined;

/**
 * Runs a full collection now (it blocks for tens of ms on a heap of ~150 MB). Returns false when this
 * runtime gives no way to ask for one (nothing is done then).
 */
export function settleHeap(): boolean {
  if (collect === undefined) collect = collector();
  if (collect === null) return false;
  collect();
  return true;
}

function collector(): (() => void) | null {
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return own as () => void;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  }
}
