/**
 * Schedule fidelity (tokenload's own metric; AIPerf's replay lag is relative to the least-late
 * request, which hides a constant delay, so this one is absolute).
 */
import type { RecordMetricDef } from '../metric-types.js';

/**
 * Schedule Lag, ms: request start − scheduled send time. Absolute (not relative to the least-late
 * request); omitted for requests without a schedule.
 */
export const scheduleLag: RecordMetricDef = {
  tag: 'schedule_lag',
  header: 'Schedule Lag',
  unit: 'ms',
  kind: 'record',
  flags: {},
  displayOrder: 1050,
  compute: ({ raw }) => (raw.scheduledNs === null ? undefined : (raw.startNs - raw.scheduledNs) / 1e6),
};
