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
}
