/**
 * Fixed-schedule options: `--help`'s "Fixed schedule:" group.
 * Each field carries its AIPerf flag, unit, default and help text ({@link option}); field names
 * follow the flags with units in the names.
 */
import { z } from 'zod';
import { option } from '../util/option-meta.js';
import { positive } from './field-kinds.js';
import { synthesisFields } from './fields-synthesis.js';

/** Fixed-schedule options. */
export const scheduleFields = {
  /** `--fixed-schedule`: replay on the trace timestamps; implied by a timestamped dataset type. */
  fixedSchedule: option(z.boolean().optional(), {
    flag: 'fixed-schedule',
    help: 'replay on the trace timestamps; --no-fixed-schedule ignores them (use --concurrency or --request-rate)',
    defaultText: 'on for timestamped traces',
  }),
  /** `--fixed-schedule-auto-offset`: start at the first timestamp (ours on; AIPerf's default off). */
  fixedScheduleAutoOffset: option(z.boolean().default(true), {
    flag: 'fixed-schedule-auto-offset',
    help: 'start the schedule at the first timestamp; --no-fixed-schedule-auto-offset idles until the first one is due',
  }),
  /** `--fixed-schedule-start-offset`: drop rows before this trace time, ms (inclusive). */
  fixedScheduleStartOffsetMs: option(z.number().min(0).optional(), {
    flag: 'fixed-schedule-start-offset',
    unit: 'ms',
    help: 'drop rows before this trace time (inclusive)',
  }),
  /** `--fixed-schedule-end-offset`: drop rows after this trace time, ms (inclusive). */
  fixedScheduleEndOffsetMs: option(z.number().min(0).optional(), {
    flag: 'fixed-schedule-end-offset',
    unit: 'ms',
    help: 'drop rows after this trace time (inclusive)',
  }),
  /**
   * `--open-loop-replay` (default on): a session's later turns at their own timestamps;
   * `--no-open-loop-replay`: each after the previous answer plus the recorded gap (closed loop).
   * Undefined when not given, so a rule can refuse it without a fixed schedule.
   */
  openLoopReplay: option(z.boolean().optional(), {
    flag: 'open-loop-replay',
    help: "send a session's later turns at their own timestamps; --no-open-loop-replay sends each after the previous answer plus the gap between the two rows' timestamps (closed loop)",
    defaultText: 'on',
  }),
  /** `--trace-idle-gap-cap-seconds`: gaps between requests of one session longer than this (after speedup) are shortened to it, s. */
  traceIdleGapCapSeconds: option(positive.optional(), {
    flag: 'trace-idle-gap-cap-seconds',
    unit: 's',
    help: 'shorten any gap between consecutive requests of one session (after --synthesis-speedup-ratio; a delay too) to s; gaps between sessions are kept',
  }),
  /** `--synthesis-speedup-ratio`: trace timestamps are divided by it. */
  synthesisSpeedupRatio: option(positive.default(1), {
    flag: 'synthesis-speedup-ratio',
    unit: 'x',
    help: 'divide trace timestamps by x',
  }),
  ...synthesisFields,
};
