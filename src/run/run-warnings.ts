/** The summary's warnings about the run itself: pacing, the replay, the trace's links and block size, a cold start. */
import type { RunPlan } from '../config/plan.js';
import { repeatedChatIdsWarning, unlinkedRowsWarning } from '../dataset/bailian-links.js';
import { blockSizeWarning } from '../dataset/prefix-analysis.js';
import { ENDPOINTS } from '../endpoint/registry.js';
import { applicableSlos, droppedSlosWarning, parseGoodput } from '../metrics/goodput.js';
import { slowFirstWaveNote } from '../metrics/start-up.js';
import { DEFAULT_MAX_CATCHUP_NS } from '../timing/request-rate.js';
import type { ReplayReport, RequestRateReport } from '../timing/types.js';
import { type FinishInput, replayError } from './finish-input.js';

const SHORTFALL_WARN_PCT = 0.1;

/** Every warning about the run itself (its responses' are apart), in the summary's order. */
export function runWarnings(input: FinishInput): string[] {
  const out: string[] = [...(input.inputWarnings ?? []), ...(input.shard?.warnings ?? [])];
  const unlinked = input.inputSkipped?.unlinkedRows;
  if (unlinked !== undefined) out.push(unlinkedRowsWarning(unlinked));
  const repeated = input.inputSkipped?.repeatedChatIds;
  if (repeated !== undefined) out.push(repeatedChatIdsWarning(repeated));
  const short = input.template?.shorterThanTemplate ?? 0;
  if (short > 0)
    out.push(
      `${short} prompts asked for fewer tokens than the chat template's own (--apply-chat-template): they were sent with an empty text, and their ISL is the template's`,
    );
  const goodput = goodputWarning(input.config);
  if (goodput !== null) out.push(goodput);
  const conflicts = input.synthesizer.blocks.sizeConflicts;
  if (conflicts > 0) out.push(blockSizeWarning(conflicts));
  const startUp = input.profiling.startUp;
  const slowStart = startUp === undefined ? null : slowFirstWaveNote(startUp, input.warmup !== null);
  if (slowStart !== null) out.push(slowStart);
  const load = input.profiling.load;
  switch (load.kind) {
    case 'fixed_schedule':
      out.push(...replayWarnings(load.replay));
      break;
    case 'request_rate':
      out.push(...pacingWarnings(input.config, load));
      break;
    case 'concurrency':
    case 'user_centric':
      break;
  }
  return out;
}

/** The warning about `--goodput` SLOs the run cannot measure (not streamed), or null. */
function goodputWarning(config: RunPlan): string | null {
  if (config.goodput === undefined) return null;
  const streamed = config.streaming && ENDPOINTS[config.endpointType].streamable;
  const { kept, dropped } = applicableSlos(parseGoodput(config.goodput), streamed);
  return droppedSlosWarning(dropped, kept.length);
}

/** A saturation warning when a request-rate run fell short of the rate asked for (at most one). */
function pacingWarnings(config: RunPlan, load: RequestRateReport): string[] {
  const { pacing, issued } = load;
  if (config.load.kind !== 'request_rate' || !(pacing.achievedRatePerS > 0)) return [];
  const { ratePerS: target, series } = config.load.rate;
  // A series has no one rate to fall short of: only its re-anchors and skipped arrivals judge it.
  const shortPct = series === undefined ? (100 * (target - pacing.achievedRatePerS)) / target : 0;
  // Poisson and gamma arrivals are random: a short run's achieved rate differs from the target by
  // chance. Only constant arrivals are judged on the rate; all patterns on re-anchors (lateness).
  // A single re-anchor (one stall longer than the catch-up bound) is not saturation either.
  const constant = config.load.rate.pattern === 'constant';
  const frequentReanchors = pacing.reanchors > Math.max(2, 0.001 * issued);
  // Skipped arrivals judge every pattern: a Poisson run that re-anchors a few times but skips a
  // sixth of its arrivals was saturated, whatever its random sample of gaps.
  const skipped = pacing.skippedArrivals > Math.max(2, (SHORTFALL_WARN_PCT / 100) * issued);
  if (!((constant && shortPct > SHORTFALL_WARN_PCT) || frequentReanchors || skipped)) return [];
  return [
    `client saturated: achieved ${pacing.achievedRatePerS.toFixed(1)} req/s of the ${series === undefined ? `${target} req/s` : 'rate series'} asked (${shortPct.toFixed(2)} % short, ${pacing.reanchors} schedule re-anchors after falling > ${DEFAULT_MAX_CATCHUP_NS / 1e6} ms behind, skipping ~${Math.round(pacing.skippedArrivals)} arrivals); the load generator, not the server, limited this run`,
  ];
}

function replayWarnings(replay: ReplayReport): string[] {
  const out: string[] = [];
  if (replay.outOfOrderSessions > 0)
    out.push(
      `trace not in timestamp order: ${replay.outOfOrderSessions} sessions were read after a later session had started and were sent late; sort the file by timestamp or pass --no-trace-streaming`,
    );
  const err = replayError(replay);
  if (err !== null) out.push(`trace reading stopped early: ${err.message}`);
  return out;
}
