/**
 * The one error base of tokenload. Every error that ends a process (a bad flag, a bad input file,
 * an unreachable server, a simulator that failed to start) is a {@link TokenloadError} with a
 * stable {@link ErrorCode}; the code decides the exit code in one table, {@link ERROR_CODES}.
 * Per-request failures are not errors of this kind: they are records (see `record/types.ts`).
 */

/** Exit code of a run stopped by Ctrl-C or SIGTERM (128 + SIGINT's number, as shells report it). */
export const EXIT_INTERRUPTED = 130;

/**
 * Every error code with its exit code and what it means. Exit codes follow the CLI's contract:
 * 2 for usage and configuration errors, 1 for bad input files and an unusable environment
 * (as sysexits' `EX_DATAERR` family, collapsed to 1 as before). An interrupt is not an error: a run
 * stopped once it started exits with {@link EXIT_INTERRUPTED} and every export; only an interrupt
 * that leaves nothing to run (`E_INTERRUPTED`) ends as an error, with the same exit code.
 */
export const ERROR_CODES = {
  /** A flag, a config-file key or a library option has a bad value or breaks a cross-field rule. */
  E_CONFIG: { exitCode: 2, meaning: 'bad configuration' },
  /** An input file (trace, dataset) is missing, unreadable or malformed; names file, line and field. */
  E_DATASET: { exitCode: 1, meaning: 'bad input file' },
  /** A tokenizer cannot be found, read or built. */
  E_TOKENIZER: { exitCode: 1, meaning: 'tokenizer unavailable' },
  /** A dataset cannot be replayed on a fixed schedule (no timestamps, …). */
  E_SCHEDULE: { exitCode: 1, meaning: 'trace cannot be scheduled' },
  /** A prompt cannot be synthesized exactly (impossible layout). */
  E_PROMPT: { exitCode: 1, meaning: 'prompt synthesis failed' },
  /** Trace synthesis (`synthesize-trace`) options or input cannot be applied. */
  E_SYNTHESIS: { exitCode: 1, meaning: 'trace synthesis failed' },
  /** The target server cannot be reached at all before the run. */
  E_UNREACHABLE: { exitCode: 1, meaning: 'server unreachable' },
  /** The built-in simulator failed to start. */
  E_SIMULATOR: { exitCode: 1, meaning: 'simulator failed' },
  /** A run's artifact folder cannot be read (report, compare). */
  E_ARTIFACTS: { exitCode: 1, meaning: 'artifacts unreadable' },
  /** Shard folders given to `tokenload merge` do not make one whole run (missing, failed, disagreeing). */
  E_SHARDS: { exitCode: 1, meaning: 'shards do not make one whole run' },
  /** A file or folder named by an option cannot be written or created (the message names the option). */
  E_OUTPUT: { exitCode: 1, meaning: 'output not writable' },
  /**
   * Ctrl-C or SIGTERM during a start-up step that cannot be skipped (a tokenizer download): the run
   * stops before anything is sent. Exit code {@link EXIT_INTERRUPTED}, as any interrupted run.
   */
  E_INTERRUPTED: { exitCode: EXIT_INTERRUPTED, meaning: 'interrupted before anything was sent' },
} as const satisfies Record<string, { exitCode: number; meaning: string }>;

/** One stable error code, e.g. `E_DATASET`. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Exit code of a run that ended without a single successful request (every request failed, or none
 * was sent): its artifacts are written, but it measured nothing.
 */
export const EXIT_NO_SUCCESS = 3;

/**
 * Exit code of a run that `--failed-request-threshold` stopped: too many of its requests failed; its
 * artifacts are written, and cover the requests sent before the stop.
 */
export const EXIT_FAILED_REQUEST_THRESHOLD = 4;

/**
 * Exit code of a `tokenload search` that a client-limited probe stopped: the client could not send
 * the load asked (its verdict `saturated`, or `late` by more than the SLOs allow), so the probe says
 * nothing of the server. `search_history.json` names the load the client delivered (`client_limit`).
 */
export const EXIT_SEARCH_CLIENT_LIMITED = 5;

/**
 * Exit code of `tokenload analyze-trace --check` when at least one check fired (a warning, not an
 * error: the trace reads, but its replay would not measure what it seems to); 0 when none did.
 */
export const EXIT_TRACE_CHECK_FIRED = 6;

/** Exit code of an unexpected error (a bug): sysexits' `EX_SOFTWARE`. */
export const EXIT_INTERNAL = 70;

/**
 * Base of every process-level tokenload error.
 * @param code - the stable code; its exit code is `ERROR_CODES[code].exitCode`.
 * @param message - one line for the user, naming the file, line, field or option at fault.
 */
export class TokenloadError extends Error {
  override readonly name: string = 'TokenloadError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The process exit code this error maps to. */
  get exitCode(): number {
    return ERROR_CODES[this.code].exitCode;
  }
}

/**
 * A bad configuration value or a broken cross-field rule. `option` is the flag as a user types it
 * (`--request-rate`), or the library field name when there is no flag.
 */
export class ConfigError extends TokenloadError {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    readonly option?: string,
  ) {
    super('E_CONFIG', message);
  }
}

/**
 * A file or folder named by an option could not be written or created. The message names the
 * option and the path; `cause` is the system error.
 */
export class OutputError extends TokenloadError {
  override readonly name = 'OutputError';
  constructor(
    message: string,
    readonly option: string,
    cause?: unknown,
  ) {
    super('E_OUTPUT', message, { cause });
  }
}

/**
 * Ctrl-C or SIGTERM stopped a start-up step the run cannot go on without (a tokenizer download);
 * nothing was sent. The message says which step and what it was doing.
 */
export class InterruptedError extends TokenloadError {
  override readonly name = 'InterruptedError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('E_INTERRUPTED', message, options);
  }
}

/** A Node system error (`ENOENT`, `EACCES`, `EADDRINUSE`, …): the user's environment, not our bug. */
export function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && 'syscall' in err;
}

/**
 * The exit code an error maps to: its code's for a {@link TokenloadError}, 1 for a system error
 * (the environment), {@link EXIT_INTERNAL} for anything else (a bug).
 */
export function exitCodeOf(err: unknown): number {
  if (err instanceof TokenloadError) return err.exitCode;
  return isSystemError(err) ? 1 : EXIT_INTERNAL;
}
