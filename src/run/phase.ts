/**
 * One phase (warmup or profiling): its own client pool, record sink and cancellation. The profiling
 * phase streams records to `profile_export.jsonl` and bodies to `inputs.json`; warmup records are
 * only kept for the separate warmup summary. A `--benchmark-duration` cut-off stops issuing; requests
 * still in flight get `--benchmark-grace-period` to finish, then are cancelled and recorded as such.
 */
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { PrewarmResult } from '../client/connector.js';
import type { HttpClient } from '../client/types.js';
import type { PhaseClient } from '../client/worker-factory.js';
import {
  INPUTS_FILE_NAME,
  InputsWriter,
  RAW_RECORDS_FILE_NAME,
  RawRecordWriter,
  RECORDS_FILE_NAME,
  RecordWriter,
} from '../export/index.js';
import type { ClientFloor } from '../health/client-floor.js';
import { startClientMonitor } from '../health/monitor.js';
import { SendLog } from '../health/send-log.js';
import type { ClientHealth } from '../health/types.js';
import type { InFlightPoint } from '../metrics/analysis/in-flight-series.js';
import { RequestTimeline } from '../metrics/analysis/request-timeline.js';
import { runSlos } from '../metrics/goodput.js';
import { type PerTurnSection, PerTurnSplit } from '../metrics/per-turn.js';
import { ServerSplit, type ServerSummary } from '../metrics/servers.js';
import { type StartUpSection, StartUpSplit } from '../metrics/start-up.js';
import { SummaryBuilder } from '../metrics/summary.js';
import { processRecord } from '../record/process.js';
import type { RawRecord } from '../record/types.js';
import { createSender } from '../request/sender.js';
import { serverTargets } from '../request/servers.js';
import { SendTally, waitForStartAt } from '../shard/start-at.js';
import { TimeBase } from '../timing/clock.js';
import { RampedSemaphore } from '../timing/ramped-semaphore.js';
import type { Dispatch, LoadStrategy, StrategyReport } from '../timing/types.js';
import type { RunContext } from './context.js';
import { armCancellation, type CutoffReport, InFlightTracker } from './cutoff.js';
import { FailureStop, type FailureStopReport } from './failure-stop.js';
import { PHASE_CONNECTIONS, prewarmPlan } from './prewarm.js';
import { type Progress, startProgress } from './progress.js';
import { describePhase, type PhaseLimits } from './strategy-factory.js';

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
  /** The phase's load in words: the strategy and its prefill gate (strategy-factory.ts `describePhase`). */
  description: string;
  /** Duration cut-off accounting; null without `--benchmark-duration`. */
  cutoff: CutoffReport | null;
  /** Load-generator self-monitoring of the profiling phase; absent when it sent nothing. */
  clientHealth?: ClientHealth;
  /** The profiling phase's connections to the target: pre-opened, and opened while it ran. */
  connections?: ConnectionsReport;
  /** The profiling phase's first seconds beside the rest; absent when either part is empty. */
  startUp?: StartUpSection;
  /** Per-server requests and main metrics of a profiling phase with several servers; absent with one. */
  servers?: ServerSummary[];
  /** The profiling phase's records by turn index (metrics/per-turn.ts); absent when no record had a turn index above 0. */
  perTurn?: PerTurnSection;
  /** The phase's first send and its sessions (the summary's `shard` section). */
  tally: SendTally;
  /** The client's in-flight count over the phase (the run analysis reads it). */
  inFlight: InFlightPoint[];
  /** The most requests the client had in flight at once during the phase (sent, not yet recorded). */
  mostInFlight: number;
  /** The few numbers per request the run analysis reads. */
  timeline: RequestTimeline;
  /** `--failed-request-threshold` of a profiling phase: whether and when it stopped the phase; absent without it. */
  failureStop?: FailureStopReport;
}

/** `connections` section of the summary: how the run got its connections to the target. */
export interface ConnectionsReport {
  /** Connections opened before the first request, and why that many (run/prewarm.ts). */
  prewarm: Omit<PrewarmResult, 'durationMs'> & { duration_ms: number; basis: string };
  /** Requests sent on a connection that was already open (kept alive, or pre-opened). */
  requests_on_open_connections: number;
  /** Requests that waited for a new connection to be opened (their `connect_time` says how long). */
  requests_on_new_connections: number;
}

/**
 * Runs one phase to completion. Never throws for request failures (they are records).
 * @param into a summary to fold the phase's records into (a warm-up's earlier rounds); absent: a new one.
 */
export async function runPhase(
  ctx: RunContext,
  phase: 'warmup' | 'profiling',
  strategy: LoadStrategy,
  limits: PhaseLimits,
  into?: SummaryBuilder,
): Promise<PhaseResult> {
  const { config } = ctx;
  const writers = openWriters(
    limits.writesTo ?? (phase === 'profiling' ? config.artifactDir : null),
    config.exportLevel,
  );
  const connections = limits.load.concurrency ?? PHASE_CONNECTIONS;
  // `--workers auto` was resolved to a count before the run (run/workers-auto.ts); unresolved, single-process.
  const workers = typeof config.workers === 'number' ? config.workers : undefined;
  const client = ctx.openClient({ urls: ctx.targets, connections, workers });
  const cancel = new AbortController();
  // Every in-flight request listens on this signal; thousands of listeners are expected.
  setMaxListeners(0, cancel.signal);
  const sinks = startSinks(ctx, { phase, limits, writers, strategy, into });
  const gate = prefillGate(ctx, limits);
  const dispatch = phaseSender(ctx, client, cancel.signal, sinks, gate);
  await client.ready?.();
  const start = await prepareStart(ctx, phase, client);
  const startTime = new Date(Date.now() + start.untilStartNs / 1e6);
  const driven = await driveLoad(ctx, { phase, strategy, limits, client, cancel, sinks, dispatch, start });
  gate?.close();
  return {
    phase,
    summary: sinks.summary,
    recordCount: sinks.summary.count,
    startTime,
    endTime: new Date(),
    interrupted: ctx.env.stopSignal.aborted,
    load: driven.load,
    description: describePhase(strategy, limits),
    cutoff: sinks.tracker.report(),
    // A phase that sent nothing has no verdict: its figures would judge an idle start-up, not a load.
    ...(driven.clientHealth === undefined || driven.load.issued === 0
      ? {}
      : { clientHealth: driven.clientHealth }),
    ...(start.prewarm === null ? {} : { connections: { prewarm: start.prewarm, ...sinks.connectionUse } }),
    ...startUpOf(sinks.startUp),
    ...(sinks.servers === null ? {} : { servers: sinks.servers.build() }),
    ...perTurnOf(sinks.perTurn),
    tally: sinks.tally,
    inFlight: sinks.tracker.series.snapshot(ctx.clock.nowNs()),
    mostInFlight: sinks.tracker.most,
    timeline: sinks.timeline,
    ...(sinks.failureStop === null ? {} : { failureStop: sinks.failureStop.report() }),
  };
}

/** What happens between a phase's set-up and its first send. */
interface PhaseStart {
  /** The client's floor its health is judged against; null when the phase is not measured. */
  floor: ClientFloor | null;
  /** `--start-at`'s monotonic ns, the schedule's zero; undefined without it. */
  startAtNs: number | undefined;
  /** How long until the schedule starts, ns (0 without `--start-at`). */
  untilStartNs: number;
  prewarm: ConnectionsReport['prewarm'] | null;
}

/**
 * The profiling phase's start: the client's floor (before the duration cut-off is armed: the
 * probe's quarter second is not part of the run), the `--start-at` wait, then pre-opened
 * connections (after the wait, so they are fresh). A warmup phase, or one stopped before it began
 * (Ctrl-C during start-up), measures nothing about the client and opens nothing to the target.
 */
async function prepareStart(
  ctx: RunContext,
  phase: 'warmup' | 'profiling',
  client: PhaseClient,
): Promise<PhaseStart> {
  const measured = () => phase === 'profiling' && !ctx.env.stopSignal.aborted;
  // With worker threads the sends run there, so the floor is probed there too (health/client-floor.ts).
  const threads =
    client.probeFloor === undefined
      ? undefined
      : { client: { probeFloor: client.probeFloor.bind(client) }, precision: ctx.config.timingPrecision };
  const floor = measured() ? await ctx.measureFloor(ctx.clock, ctx.env.stopSignal, threads) : null;
  const startAtNs = measured() ? await waitForStartAt(ctx) : undefined;
  const prewarm = measured() ? await prewarmTarget(ctx, client) : null;
  const untilStartNs = Math.max(0, (startAtNs ?? 0) - ctx.clock.nowNs());
  return { floor: measured() ? floor : null, startAtNs, untilStartNs, prewarm };
}

/** What {@link driveLoad} runs: a phase, set up and started. */
interface PhaseRun {
  phase: 'warmup' | 'profiling';
  strategy: LoadStrategy;
  limits: PhaseLimits;
  client: PhaseClient;
  cancel: AbortController;
  sinks: PhaseSinks;
  dispatch: Dispatch;
  start: PhaseStart;
}

/**
 * Runs the strategy with the duration cut-off armed and the client monitored, then closes the
 * client and the phase's files whatever happened.
 */
async function driveLoad(
  ctx: RunContext,
  run: PhaseRun,
): Promise<{ load: StrategyReport; clientHealth: ClientHealth | undefined }> {
  const { sinks, start, limits } = run;
  const loadStartNs = start.startAtNs ?? ctx.clock.nowNs();
  const threshold = ctx.config.failedRequestThreshold;
  if (run.phase === 'profiling' && threshold !== undefined)
    sinks.failureStop = new FailureStop(threshold, ctx.clock, loadStartNs, ctx.env.log);
  // The threshold stops issuing as Ctrl-C does: the same signal to the strategy and the same grace.
  const stopSignal =
    sinks.failureStop === null
      ? ctx.env.stopSignal
      : AbortSignal.any([ctx.env.stopSignal, sinks.failureStop.signal]);
  // The duration cut-off also stops issuing, whatever the strategy's own clock says.
  const stopIssuing = new AbortController();
  const disarm = armCancellation({
    clock: ctx.clock,
    env: { ...ctx.env, stopSignal },
    stopIssuing,
    gracePeriodSeconds: ctx.config.gracePeriodSeconds,
    ...(limits.cutoffGraceSeconds === undefined ? {} : { cutoffGraceSeconds: limits.cutoffGraceSeconds }),
    durationNs:
      limits.stop.durationNs === undefined ? undefined : limits.stop.durationNs + start.untilStartNs,
    cancel: run.cancel,
    tracker: sinks.tracker,
  });
  const monitor = start.floor === null ? null : startClientMonitor(start.floor, run.client);
  sinks.startUp = run.phase === 'profiling' ? new StartUpSplit(loadStartNs) : null;
  let load: StrategyReport;
  let clientHealth: ClientHealth | undefined;
  try {
    load = await run.strategy.run({
      conversations: ctx.dataset.conversations,
      clock: ctx.clock,
      dispatch: run.dispatch,
      signal: AbortSignal.any([stopSignal, stopIssuing.signal]),
      ...(start.startAtNs === undefined ? {} : { startAtNs: start.startAtNs }),
    });
  } finally {
    disarm();
    clientHealth = monitor?.stop(sinks.sends.clientLagsMs(), sinks.sends);
    sinks.progress.stop();
    await run.client.close();
    await sinks.records?.close();
    await sinks.inputs?.close();
    await sinks.raw?.close();
  }
  return { load, clientHealth };
}

/** Opens the profiling phase's connections to the target before its first request; logs what it did. */
async function prewarmTarget(
  ctx: RunContext,
  client: PhaseClient,
): Promise<ConnectionsReport['prewarm'] | null> {
  const plan = prewarmPlan(ctx.config, ctx.dataset, ctx.stream !== null);
  if (client.prewarm === undefined) return null;
  const result =
    plan.count === 0
      ? { requested: 0, opened: 0, failed: 0, durationMs: 0 }
      : await client.prewarm(plan.count);
  if (plan.count > 0) {
    const where = ctx.targets.length === 1 ? 'the target' : `the ${ctx.targets.length} servers, split evenly`;
    const line = `pre-opened ${result.opened} ${result.opened === 1 ? 'connection' : 'connections'} to ${where} in ${result.durationMs.toFixed(0)} ms (${plan.basis})`;
    if (result.failed === 0) ctx.env.log.info(line);
    else ctx.env.log.warn(`${line}; ${result.failed} failed to open (first: ${result.error})`);
  }
  const { durationMs, ...counts } = result;
  return { ...counts, duration_ms: Math.round(durationMs * 1000) / 1000, basis: plan.basis };
}

function perTurnOf(split: PerTurnSplit | null): { perTurn?: PerTurnSection } {
  const section = split?.build() ?? null;
  split?.release();
  return section === null ? {} : { perTurn: section };
}

function startUpOf(split: StartUpSplit | null): { startUp?: StartUpSection } {
  const section = split?.build() ?? null;
  return section === null ? {} : { startUp: section };
}

/** The profiling phase's files (records, request bodies); warmup writes none. */
interface PhaseWriters {
  records: RecordWriter | null;
  inputs: InputsWriter | null;
  /** `profile_export_raw.jsonl`, with `--export-level raw` only. */
  raw: RawRecordWriter | null;
}

/** Where a phase's sends and records go: counted, summarized, shown, and (profiling) written. */
interface PhaseSinks extends PhaseWriters {
  summary: SummaryBuilder;
  /** Scheduled times and lags, for the health verdict's bursts. */
  sends: SendLog;
  progress: Progress;
  tracker: InFlightTracker;
  timeline: RequestTimeline;
  /** Set when the load begins. */
  startUp: StartUpSplit | null;
  connectionUse: Omit<ConnectionsReport, 'prewarm'>;
  /** Per-server tallies (profiling with several servers); null otherwise. */
  servers: ServerSplit | null;
  /** Per-turn-index tallies (profiling); null in a warmup phase. */
  perTurn: PerTurnSplit | null;
  tally: SendTally;
  /** `--failed-request-threshold` (profiling); set when the load begins, null without it. */
  failureStop: FailureStop | null;
}

/** The phase's writers into `dir`, or none (null). */
function openWriters(dir: string | null, exportLevel: 'summary' | 'records' | 'raw'): PhaseWriters {
  if (dir === null) return { records: null, inputs: null, raw: null };
  const time = new TimeBase();
  const at = (name: string): string => join(dir, name);
  return {
    records: new RecordWriter(at(RECORDS_FILE_NAME), time),
    inputs: new InputsWriter(at(INPUTS_FILE_NAME)),
    raw: exportLevel === 'raw' ? new RawRecordWriter(at(RAW_RECORDS_FILE_NAME), time) : null,
  };
}

/**
 * The requests the progress bar counts to: the request count; else every turn of a dataset played
 * once, either as a one-pass replay or as `--conversation-num` sessions covering the dataset once
 * (the synthetic default); else unknown (null).
 */
function progressTotal(limits: PhaseLimits, ctx: RunContext): number | null {
  const wholeDataset = ctx.dataset.turnCount;
  const once =
    (limits.onePass && ctx.stream === null) ||
    (limits.sessions !== undefined && limits.sessions === ctx.dataset.conversations.length);
  const dataset = once ? wholeDataset : null;
  const count = limits.stop.requestCount;
  if (count === undefined) return dataset;
  return dataset === null ? count : Math.min(count, dataset);
}

/** @throws {GoodputParseError} for a bad `--goodput`. */
function startSinks(
  ctx: RunContext,
  of: {
    phase: 'warmup' | 'profiling';
    limits: PhaseLimits;
    writers: PhaseWriters;
    strategy: LoadStrategy;
    into: SummaryBuilder | undefined;
  },
): PhaseSinks {
  const { config } = ctx;
  const { phase, limits, writers, strategy } = of;
  const summary =
    of.into ??
    new SummaryBuilder({
      overheadOf: ctx.adapter.chatTemplated ? 'chat_template' : 'prompt_joiners',
      ...runSlos(config.goodput, config.streaming && ctx.adapter.streamable),
    });
  const replay = strategy.replayProgress?.bind(strategy);
  const progress = startProgress(config.ui, ctx.env.log, {
    total: progressTotal(limits, ctx),
    ...(replay === undefined ? {} : { replay }),
  });
  const connectionUse = { requests_on_open_connections: 0, requests_on_new_connections: 0 };
  const tracker = new InFlightTracker(() => ctx.clock.nowNs());
  const servers = phase === 'profiling' && ctx.targets.length > 1 ? new ServerSplit(ctx.targets) : null;
  return {
    ...writers,
    summary,
    sends: new SendLog(() => summary.valuesOf('schedule_lag')),
    progress,
    tracker,
    timeline: new RequestTimeline(),
    startUp: null,
    connectionUse,
    servers,
    perTurn: phase === 'profiling' ? new PerTurnSplit() : null,
    tally: new SendTally(),
    failureStop: null,
  };
}

/** The phase's prefill gate (`--prefill-concurrency`), its ramp on the run's clock; undefined without one. */
function prefillGate(ctx: RunContext, limits: PhaseLimits): RampedSemaphore | undefined {
  const spec = limits.prefill;
  if (spec === null) return undefined;
  return new RampedSemaphore(
    spec.limit,
    spec.rampNs === undefined ? undefined : { clock: ctx.clock, rampNs: spec.rampNs },
  );
}

/** The sender of a phase: its sends and records feed the sinks. */
function phaseSender(
  ctx: RunContext,
  client: HttpClient,
  cancelSignal: AbortSignal,
  sinks: PhaseSinks,
  gate: RampedSemaphore | undefined,
): Dispatch {
  const { config, adapter } = ctx;
  const streaming = config.streaming && adapter.streamable;
  const processing = {
    tokenizer: ctx.tokenizer,
    useServerTokenCount: config.useServerTokenCount,
    streaming,
    perChunkUsage: config.perChunkUsage,
  };
  return createSender({
    config,
    client,
    adapter,
    servers: serverTargets(ctx),
    synthesizer: ctx.synthesizer,
    tokenizer: ctx.tokenizer,
    templateCounter: ctx.templateCounter ?? null,
    systemPrompt: ctx.systemPrompt ?? null,
    clock: ctx.clock,
    cancelSignal,
    ...(ctx.idealCaches === undefined ? {} : { idealCaches: ctx.idealCaches }),
    ...(gate === undefined ? {} : { prefillGate: gate }),
    onBody: (sessionId, turn, body) => {
      sinks.raw?.addBody(sessionId, turn, body);
      return sinks.inputs?.add(sessionId, turn, body);
    },
    onSend: () => {
      sinks.tracker.started();
      sinks.progress.onSend();
    },
    onRecord: async (raw: RawRecord): Promise<void> => {
      sinks.tracker.done(raw);
      const processed = processRecord(raw, processing);
      sinks.summary.add(processed);
      sinks.sends.add(processed);
      sinks.startUp?.add(processed);
      sinks.timeline.add(processed);
      sinks.failureStop?.add(processed);
      sinks.servers?.add(processed);
      sinks.perTurn?.add(processed);
      sinks.tally.add(raw);
      countConnection(sinks.connectionUse, raw);
      sinks.progress.onRecord(processed);
      await sinks.records?.write(processed);
      await sinks.raw?.write(processed, raw);
    },
  });
}

function countConnection(use: PhaseSinks['connectionUse'], raw: RawRecord): void {
  if (raw.connectionReused === true) use.requests_on_open_connections++;
  else if (raw.connectionReused === false) use.requests_on_new_connections++;
}
