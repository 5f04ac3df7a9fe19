/**
 * Error summary: failed records grouped by (code, type), like AIPerf's `error_summary`.
 */
import type { LineError } from '../record/types.js';

/** One group of identical failures, with the first message seen as the example. */
export interface ErrorSummaryEntry {
  code: number;
  type: string;
  message: string;
  count: number;
}

/** Accumulates failures by (code, type). */
export class ErrorSummaryBuilder {
  private readonly groups = new Map<string, ErrorSummaryEntry>();

  /** Counts one failure. */
  add(error: LineError): void {
    const key = `${error.code}\u0000${error.type}`;
    const entry = this.groups.get(key);
    if (entry === undefined) {
      this.groups.set(key, { code: error.code, type: error.type, message: error.message, count: 1 });
    } else {
      entry.count++;
    }
  }

  /** Groups, most frequent first; ties by code, then type. */
  entries(): ErrorSummaryEntry[] {
    return [...this.groups.values()].sort(
      (a, b) => b.count - a.count || a.code - b.code || a.type.localeCompare(b.type),
    );
  }
}
