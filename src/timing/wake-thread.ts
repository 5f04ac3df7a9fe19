/**
 * Sub-millisecond wake-ups without a busy main thread. Node timers cannot wait less than 1 ms and
 * may fire up to 1 ms early or late, so a precise send would otherwise need the main thread to poll
 * (`setImmediate`) through the last stretch before every target: at 1,000 requests/s that is a whole
 * core spinning. Instead one helper thread per process sleeps on a futex (`Atomics.wait`) until
 * shortly before the earliest requested target, spins the last {@link WAKE_LEAD_NS} on the
 * monotonic clock, and posts a message, which wakes the main event loop out of its I/O wait.
 *
 * The thread is created on first use and unref'd (it never keeps the process alive); callers keep
 * their own ordinary timer as a liveness guard and fallback. Times are monotonic ns of the main
 * thread (`performance.now()` × 1e6); the thread works on `process.hrtime`, the same clock.
 */
import { Worker } from 'node:worker_threads';
import { monotonicNowNs } from './clock.js';

/** How long before a target the thread stops sleeping and spins, ns (covers part of the futex wake-up slack). */
export const WAKE_LEAD_NS = 50_000;

/** Something that wants to be woken: called on the main thread at (or just after) its target. */
export interface WakeClient {
  onWake(): void;
}

/**
 * After a wake-up the thread looks for the next target again this long later on its own, ns: the
 * next target usually follows within microseconds, and if it is due after that look the main thread
 * need not wake the thread (a futex wake can preempt the main thread on a busy machine).
 */
export const WAKE_LINGER_NS = 500_000;

/**
 * Thread body (CommonJS, run with `eval`). Shared words: [0] generation, bumped by every change of
 * the target (the thread waits on it); [1] target in hrtime ns, 0 for none, -1 to exit; [2] when
 * the thread will next look at [0] and [1] on its own (hrtime ns; 0 while awake, max when only a
 * notify wakes it).
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const shared = new BigInt64Array(workerData.buffer);
const leadNs = BigInt(workerData.leadNs);
const lingerNs = BigInt(workerData.lingerNs);
const NEVER = 0x7fffffffffffffffn;
const now = process.hrtime.bigint;
const sleepUntil = (gen, at, t) => {
  Atomics.store(shared, 2, at);
  if (at === NEVER) Atomics.wait(shared, 0, gen);
  else Atomics.wait(shared, 0, gen, Number(at - t) / 1e6);
};
let firedGen = -1n;
let lingerUntil = 0n;
for (;;) {
  const gen = Atomics.load(shared, 0);
  const target = Atomics.load(shared, 1);
  if (target < 0n) break;
  const t = now();
  if (target === 0n || gen === firedGen) { sleepUntil(gen, t < lingerUntil ? lingerUntil : NEVER, t); continue; }
  if (t < target - leadNs) { sleepUntil(gen, target - leadNs, t); continue; }
  Atomics.store(shared, 2, 0n);
  while (now() < target && Atomics.load(shared, 0) === gen) {}
  if (Atomics.load(shared, 0) !== gen) continue;
  parentPort.postMessage(0);
  firedGen = gen;
  lingerUntil = now() + lingerNs;
}
`;

/**
 * hrtime ns − monotonic ns, rounded up: the true offset lies in [h − b, h − a] for readings
 * a (monotonic), h (hrtime), b (monotonic) taken in that order; the tightest upper bound of a few
 * samples makes the thread wake at or after a target, never before it by the main thread's clock.
 */
function hrOffsetUpperBoundNs(): number {
  let best = Number.POSITIVE_INFINITY;
  let offset = 0;
  for (let i = 0; i < 16; i++) {
    const a = monotonicNowNs();
    const h = Number(process.hrtime.bigint());
    const b = monotonicNowNs();
    if (b - a < best) {
      best = b - a;
      offset = h - a;
    }
  }
  return Math.ceil(offset);
}

/** The process-wide helper thread; see the module comment. */
export class WakeThread {
  private readonly shared = new BigInt64Array(new SharedArrayBuffer(24));
  private readonly worker: Worker;
  private readonly targets = new Map<WakeClient, number>();
  /** hrtime ns − monotonic ns, rounded up (constant: both count from the same clock). */
  private readonly hrOffsetNs: number;
  private armedNs = 0;
  private online = false;
  private failed = false;

  private constructor() {
    this.hrOffsetNs = hrOffsetUpperBoundNs();
    this.worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { buffer: this.shared.buffer, leadNs: WAKE_LEAD_NS, lingerNs: WAKE_LINGER_NS },
      stdout: false,
      stderr: false,
    });
    this.worker.once('online', () => {
      this.online = true;
    });
    this.worker.on('message', () => this.deliver());
    this.worker.on('error', () => this.fail());
    this.worker.on('exit', () => this.fail());
    // After the listeners: adding a 'message' listener refs the port again.
    this.worker.unref();
  }

  /**
   * True while the thread runs. Before it is online (its first ~tens of ms) and after a failure,
   * callers use their own timers.
   */
  get usable(): boolean {
    return this.online && !this.failed;
  }

  /** Asks for a wake-up of `client` at monotonic `targetNs` (replaces its earlier request). */
  request(client: WakeClient, targetNs: number): void {
    this.targets.set(client, targetNs);
    this.rearm();
  }

  /** Withdraws `client`'s request. */
  cancel(client: WakeClient): void {
    if (this.targets.delete(client)) this.rearm();
  }

  private rearm(): void {
    let earliest = Number.POSITIVE_INFINITY;
    for (const t of this.targets.values()) earliest = Math.min(earliest, t);
    const hrNs = Number.isFinite(earliest) ? Math.max(1, Math.round(earliest + this.hrOffsetNs)) : 0;
    if (hrNs === this.armedNs) return;
    this.armedNs = hrNs;
    const target = BigInt(hrNs);
    Atomics.store(this.shared, 1, target);
    Atomics.add(this.shared, 0, 1n);
    // A notify only when the thread would otherwise look too late (see WAKE_LINGER_NS).
    if (hrNs !== 0 && target - BigInt(WAKE_LEAD_NS) < Atomics.load(this.shared, 2)) {
      Atomics.notify(this.shared, 0);
    }
  }

  /** The thread reached the earliest target: wake every due client, earliest first (each re-requests). */
  private deliver(): void {
    this.armedNs = 0;
    const now = monotonicNowNs();
    const due = [...this.targets].filter(([, t]) => t <= now).sort((x, y) => x[1] - y[1]);
    for (const [c] of due) this.targets.delete(c);
    this.rearm();
    for (const [c] of due) c.onWake();
  }

  private fail(): void {
    this.failed = true;
  }

  private static instance: WakeThread | null | undefined;

  /** The process's wake thread, created on first call; null where worker threads are unavailable. */
  static shared(): WakeThread | null {
    if (WakeThread.instance === undefined) {
      try {
        WakeThread.instance = new WakeThread();
      } catch {
        WakeThread.instance = null;
      }
    }
    return WakeThread.instance === null || WakeThread.instance.failed ? null : WakeThread.instance;
  }
}
