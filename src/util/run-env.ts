/**
 * What a caller injects into a run: where human messages go and the signals that stop it. Every
 * stage that logs or can be interrupted takes these, so they live at the bottom of the tree.
 */

/** Where the run writes human messages (stderr in the CLI). */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

/** Injected environment of a run. */
export interface RunEnv {
  log: Logger;
  /** Aborting stops issuing new requests (Ctrl-C / SIGTERM). */
  stopSignal: AbortSignal;
  /** Aborting cancels in-flight requests at once (a second Ctrl-C). */
  forceSignal?: AbortSignal;
  /**
   * Called once the run's inputs are checked, right before it removes an earlier run's artifacts
   * from its folder: a sweep's first run claims the sweep's folder here, so a bad input leaves an
   * earlier sweep's files as they are.
   */
  beforeClaim?: () => Promise<void>;
}
