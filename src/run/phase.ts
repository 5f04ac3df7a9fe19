/**
 * One phase (warmup or profiling): its own client pool, record sink and cancellation. The profiling
 * phase streams records to `profile_export.jsonl` and bodies to `inputs.json`; warmup records are
 * only kept for the separate warmup summary. A `--benchmark-duration` cut-off stops issuing; requests
 * still in flight get `--benchmark-grace-period` to finish, then are cancelled and recorded as such.
 */
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { endpointPathFor } from '../endpoint/types.js';
import { INPUTS_FILE_NAME, InputsWriter, RECORDS_FILE_NAME, RecordWriter } from '../export/index.js';
import { parseGoodput } from '../metrics/goodput.js';
import { SummaryBuilder } from '../metrics/summary.js';
import { processRecord } from '../record/process.js';
import type { RawRecord } from '../record/types.js';
import { TimeBase } from '../timing/clock.js';
import type { LoadStrategy, StrategyReport } from '../timing/types.js';
import type { RunContext } from './context.js';
import { armCancellation, type CutoffReport, InFlightTracker } from './cutoff.js';
import { type ClientHealth, startClientMonitor } from './monitor.js';
import { startProgress } from './progress.js';
import { createSender } from './sender.js';
import type { PhaseLimits } from './strategy-factory.js';

/** What a phase produced. */
export interface PhaseResult {
  phase: 'warmup' | 'profiling';
  /**
   * The phase's records folded into a summary as they completed (the records themselves are on disk
   * in `profile_export.jsonl`, not in memory, so a long run's memory does not grow per record).
   */
  summary: SummaryBuilder;
  /** Records the phase produced. */
  recordCount: number;
  startTime: Date;
  endTime: Date;
  /** True when Ctrl-C / SIGTERM stopped the phase early. */
  interrupted: boolean;
  /** The strategy's report: requests issued, plus its own facts by `kind` (replay, pacing). */
  load: StrategyReport;
  /** Duration cut-off accounting; null without `--benchmark-duration`. */
  cutoff: CutoffReport | null;
  /** Load-generator self-monitoring of the profiling phase. */
  clientHealth?: ClientHealth;
}

/** Runs one phase to completion. Never throws for request failures (they are records). */
export async function runPhase(
  ctx: RunContext,
  phase: 'warmup' | 'profiling',
  strategy: LoadStrategy,
  limits: PhaseLimits,
): Promise<PhaseResult> {
  const { config, env } = ctx;
  const profiling = phase === 'profiling';
  const recordWriter = profiling
    ? new RecordWriter(join(config.artifactDir, RECORDS_FILE_NAME), new TimeBase())
    : null;
  const inputsWriter = profiling ? new InputsWriter(join(config.artifactDir, INPUTS_FILE_NAME)) : null;
  const connections = config.concurrency ?? 2500;
  const client = ctx.openClient({ url: ctx.target, connections, workers: config.workers });
  const summary = new SummaryBuilder(
    config.goodput === undefined ? {} : { slos: parseGoodput(config.goodput) },
  );
  const cancel = new AbortController();
  // Every in-flight request listens on this signal; thousands of listeners are expected.
  setMaxListeners(0, cancel.signal);
  const progress = startProgress(
    config.ui,
    env.log,
    limits.stop.requestCount ?? (limits.onePass && ctx.stream === null ? ctx.dataset.turnCount : null),
  );
  const tracker = new InFlightTracker();
  const onRecord = async (raw: RawRecord): Promise<void> => {
    tracker.done(raw);
    const processed = processRecord(raw, {
      tokenizer: ctx.tokenizer,
      useServerTokenCount: config.useServerTokenCount,
      streaming: config.streaming && ctx.adapter.streamable,
    });
    summary.add(processed);
    progress.onRecord(processed);
    await recordWriter?.write(processed);
  };
  const dispatch = createSender({
    config,
    client,
    adapter: ctx.adapter,
    path: basePath(ctx.target) + endpointPathFor(ctx.adapter, config.streaming, config.endpointPath),
    synthesizer: ctx.synthesizer,
    tokenizer: ctx.tokenizer,
    clock: ctx.clock,
    cancelSignal: cancel.signal,
    onBody: (sessionId, _turn, body) => inputsWriter?.add(sessionId, body),
    onSend: () => {
      tracker.started();
      progress.onSend();
    },
    onRecord,
  });
  await client.ready?.();
  const startTime = new Date();
  const disarm = armCancellation({
    clock: ctx.clock,
    env,
    gracePeriodSeconds: config.gracePeriodSeconds,
    durationNs: limits.stop.durationNs,
    cancel,
    tracker,
  });
  let load: StrategyReport;
  let clientHealth: ClientHealth | undefined;
  const monitor = profiling ? startClientMonitor(client) : null;
  try {
    load = await strategy.run({
      conversations: ctx.dataset.conversations,
      clock: ctx.clock,
      dispatch,
      signal: env.stopSignal,
    });
  } finally {
    disarm();
    clientHealth = monitor?.stop(summary.valuesOf('schedule_lag'));
    progress.stop();
    await client.close();
    await recordWriter?.close();
    await inputsWriter?.close();
  }
  return {
    phase,
    summary,
    recordCount: summary.count,
    startTime,
    endTime: new Date(),
    interrupted: env.stopSignal.aborted,
    load,
    cutoff: tracker.report(),
    ...(clientHealth === undefined ? {} : { clientHealth }),
  };
}

/** Path part of the target URL (a base path given in `--url`), without a trailing slash. */
function basePath(target: string): string {
  const p = new URL(target).pathname;
  return p === '/' ? '' : p.replace(/\/+$/, '');
}
