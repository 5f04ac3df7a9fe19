/**
 * Cancellation with one `abort` listener per signal instead of one per request. A run passes the
 * same AbortSignal to every request; Node's EventTarget scans all listeners on every add and remove,
 * so per-request listeners cost O(in-flight) each. Here each signal gets one listener and a linked
 * list of the requests watching it (O(1) add and remove); the listener goes away when the list
 * empties. On abort every watcher is told once, in the order it started watching.
 */

/** A request watching a signal; the link fields belong to {@link AbortWatch}. */
export interface AbortWatcher {
  /** Called once when the watched signal aborts, with its reason. */
  onSignalAbort(reason: unknown): void;
  prevWatcher: AbortWatcher | null;
  nextWatcher: AbortWatcher | null;
  /** The signal this watcher is registered with, or null. */
  watching: AbortSignal | null;
}

/** The watchers of one signal. */
class SignalWatchers {
  head: AbortWatcher | null = null;
  tail: AbortWatcher | null = null;
  readonly listener = (): void => this.owner.aborted(this.signal, this);

  constructor(
    readonly signal: AbortSignal,
    private readonly owner: AbortWatch,
  ) {}
}

/** Per-client registry of signal watchers. */
export class AbortWatch {
  private readonly bySignal = new Map<AbortSignal, SignalWatchers>();

  /** Starts watching `signal` (not yet aborted) for `watcher`. */
  add(signal: AbortSignal, watcher: AbortWatcher): void {
    let watchers = this.bySignal.get(signal);
    if (watchers === undefined) {
      watchers = new SignalWatchers(signal, this);
      this.bySignal.set(signal, watchers);
      signal.addEventListener('abort', watchers.listener, { once: true });
    }
    watcher.watching = signal;
    watcher.prevWatcher = watchers.tail;
    watcher.nextWatcher = null;
    if (watchers.tail === null) watchers.head = watcher;
    else watchers.tail.nextWatcher = watcher;
    watchers.tail = watcher;
  }

  /** Stops watching, if `watcher` watches a signal; drops the signal's listener when none is left. */
  remove(watcher: AbortWatcher): void {
    const signal = watcher.watching;
    if (signal === null) return;
    watcher.watching = null;
    const watchers = this.bySignal.get(signal);
    if (watchers === undefined) return;
    const prev = watcher.prevWatcher;
    const next = watcher.nextWatcher;
    if (prev === null) watchers.head = next;
    else prev.nextWatcher = next;
    if (next === null) watchers.tail = prev;
    else next.prevWatcher = prev;
    watcher.prevWatcher = null;
    watcher.nextWatcher = null;
    if (watchers.head === null) {
      this.bySignal.delete(signal);
      signal.removeEventListener('abort', watchers.listener);
    }
  }

  /** The signal aborted: detach every watcher first, then notify them in order. */
  aborted(signal: AbortSignal, watchers: SignalWatchers): void {
    if (this.bySignal.get(signal) === watchers) this.bySignal.delete(signal);
    const list: AbortWatcher[] = [];
    for (let w = watchers.head; w !== null; w = w.nextWatcher) list.push(w);
    watchers.head = null;
    watchers.tail = null;
    for (const w of list) {
      w.watching = null;
      w.prevWatcher = null;
      w.nextWatcher = null;
    }
    for (const w of list) w.onSignalAbort(signal.reason);
  }
}
