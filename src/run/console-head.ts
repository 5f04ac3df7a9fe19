/**
 * The console's first lines of a run, before its table: the command, the load, the shard, the
 * tokenizer, the duration cut-off, client health, connections, the start-up split, per-server
 * lines, the per-turn line, an interrupt and what the input lost.
 */
import { EXIT_NO_SUCCESS } from '../errors.js';
import { interruptedLine, type RunStatus, statusLeadLine } from '../export/run-status.js';
import { clientHealthLine } from '../health/monitor.js';
import type { ServerVerdict } from '../metrics/analysis/server-verdict.js';
import { perTurnLine } from '../metrics/per-turn.js';
import { serverLine } from '../metrics/servers.js';
import { startUpLine } from '../metrics/start-up.js';
import { connectionsLine, loadLine, serverVerdictLine, tokenizerLine } from '../report/lead.js';
import { type FinishInput, feedErrorOf, sentCount } from './finish-input.js';
import { untilCachedLine } from './warmup-rounds.js';
import { workersLine } from './workers-auto.js';

/**
 * The lines the console shows before its table, as one text ending in a newline; the server verdict
 * follows the client's.
 */
export function header(input: FinishInput, status: RunStatus, verdict: ServerVerdict | null = null): string {
  const lines = [`CLI Command: ${input.config.commandLine}`, loadLine(input.profiling.description)];
  const offset = autoOffsetLine(input);
  if (offset !== null) lines.push(offset);
  if (input.shard) lines.push(input.shard.line);
  if (input.tokenizer !== undefined) lines.push(tokenizerLine(input.tokenizer));
  // A run that measured nothing, or that too many failures stopped, says so before anything else.
  const lead = statusLeadLine(status);
  const leads = status.exit_code === EXIT_NO_SUCCESS || status.status === 'failed_request_threshold';
  if (leads && lead !== null) lines.unshift(lead);
  const cut = input.profiling.cutoff;
  if (cut !== null && cut !== undefined) {
    lines.push(
      `Duration cut-off: ${cut.inFlightAtCutoff} requests in flight; ${cut.completedInGrace} completed in the grace period, ${cut.cancelledAfterGrace} cancelled after it`,
    );
  }
  if (input.workersChoice !== undefined && input.workersChoice !== null)
    lines.push(workersLine(input.workersChoice));
  const health = input.profiling.clientHealth;
  if (health !== undefined) lines.push(clientHealthLine(health));
  if (verdict !== null) lines.push(serverVerdictLine(verdict).text);
  const connections = input.profiling.connections;
  if (connections !== undefined) lines.push(connectionsLine(connections));
  if (input.warmupUntilCached != null) lines.push(untilCachedLine(input.warmupUntilCached));
  const startUp = input.profiling.startUp;
  if (startUp !== undefined) lines.push(startUpLine(startUp));
  for (const server of input.profiling.servers ?? []) lines.push(serverLine(server));
  const byTurn = input.profiling.perTurn === undefined ? null : perTurnLine(input.profiling.perTurn);
  if (byTurn !== null) lines.push(byTurn);
  if (input.profiling.interrupted) lines.push(interruptedLine(sentCount(input)));
  const bad = input.inputSkipped?.badLines ?? 0;
  if (bad > 0)
    lines.push(`Input: ${bad} malformed ${bad === 1 ? 'line' : 'lines'} skipped (--skip-bad-lines)`);
  const inputError = feedErrorOf(input.profiling.load);
  if (inputError !== null)
    lines.push(
      `Stopped by a bad trace row: ${inputError.message}; the rows read before it were sent on their schedule, and the summary covers them`,
    );
  return `${lines.join('\n')}\n`;
}

/** Traces whose first timestamp is at most this far from zero start as AIPerf starts them, ms. */
const AUTO_OFFSET_QUIET_MS = 1000;

/**
 * With `--fixed-schedule-auto-offset` (tokenload's default, not AIPerf's), a trace whose first
 * timestamp is more than 1 s from zero: the line saying the replay started at once where AIPerf
 * would have waited for it (docs/aiperf.md); null otherwise.
 */
function autoOffsetLine(input: FinishInput): string | null {
  const { load } = input.profiling;
  if (load.kind !== 'fixed_schedule' || input.config.load.kind !== 'fixed_schedule') return null;
  if (input.config.load.zero.kind !== 'auto' || !(load.replay.zeroMs > AUTO_OFFSET_QUIET_MS)) return null;
  const waitS = (load.replay.zeroMs / 1000).toFixed(1);
  return `Fixed schedule: starting at once; AIPerf waits ${waitS} s for the first timestamp; --no-fixed-schedule-auto-offset to wait`;
}

/** A constant-rate run this far short of its target (%) is reported as client-saturated. */
