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
  /**
   * Where the run sits in a sweep or a multi-run (`--num-profile-runs`): written to the summary's
   * `run_info`. Absent for a lone run (`run_0001`, variation `base`).
   */
  runLabels?: RunLabels;
  /** What `--workers auto` takes the machine to be (run/workers-auto.ts); tests set it, the CLI does not. */
  machine?: MachineOverride;
}

/** Facts of the machine a caller may set in place of the real ones (tests claim other cores). */
export interface MachineOverride {
  /** Cores the run may use; default `os.availableParallelism()`. */
  cores?: number;
  /** The calibration file to read; default `~/.cache/tokenload/calibration.json` (health/calibration-file.ts). */
  calibrationPath?: string;
}

/**
 * A run's place among the runs of one command, as AIPerf's `run_info` names it (its JSON export
 * schema 1.3): the sweep's id, the trial (zero-based), the run's label (`run_0002`,
 * `concurrency_10`), the variation (`base` without a sweep) with its index and values.
 */
export interface RunLabels {
  /** UUID shared by every run of one command with several runs; null for a lone run. */
  sweepId: string | null;
  /** Zero-based trial (repetition) of this variation. */
  trial: number;
  runLabel: string;
  variationLabel: string;
  variationIndex: number;
  /** The sweep's values for this run, by AIPerf path (`loadgen.concurrency`); empty without a sweep. */
  variationValues: Record<string, number>;
}
