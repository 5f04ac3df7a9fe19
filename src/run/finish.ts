/**
 * End of a run: summarize the records and write the summary artifacts and the console copy.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inputConfigOf } from '../config/input-config.js';
import type { RunPlan } from '../config/plan.js';
import type { ProfileConfig } from '../config/resolve.js';
import { repeatedChatIdsWarning, unlinkedRowsWarning } from '../dataset/bailian-links.js';
import { blockSizeWarning } from '../dataset/prefix-analysis.js';
import type { SkipCounts } from '../dataset/types.js';
import { EXIT_NO_SUCCESS } from '../errors.js';
import type { ArtifactPaths } from '../export/console-table.js';
import { EXPORTERS, INPUTS_FILE_NAME, RECORDS_FILE_NAME, writeSummaryFiles } from '../export/index.js';
import { interruptedLine, type RunStatus, runStatusOf, statusLeadLine } from '../export/run-status.js';
import type { SummaryExportContext } from '../export/summary-json.js';
import { clientHealthLine } from '../health/monitor.js';
import { type ResponseWarningContext, responseWarnings } from '../metrics/response-checks.js';
import { serverLine } from '../metrics/servers.js';
import { startUpLine } from '../metrics/start-up.js';
import type { Summary } from '../metrics/summary.js';
import type { PromptSynthesizer } from '../prompt/synthesizer.js';
import { describeTokenizer, type TokenizerSection } from '../prompt/tokenizer-source.js';
import { writeReport } from '../report/html.js';
import { loadLine } from '../report/lead.js';
import {
  SERVER_METRICS_CSV_FILE_NAME,
  SERVER_METRICS_JSON_FILE_NAME,
  SERVER_METRICS_JSONL_FILE_NAME,
} from '../server-metrics/exports.js';
import type { ScrapeReport } from '../server-metrics/scraper.js';
import type { ServerMetricsSection } from '../server-metrics/section.js';
import type { ShardReport } from '../shard/start-at.js';
import { DEFAULT_MAX_CATCHUP_NS } from '../timing/request-rate.js';
import type {
  LoadStrategy,
  PacingReport,
  ReplayReport,
  RequestRateReport,
  StrategyReport,
} from '../timing/types.js';
import type { ConnectionsReport, PhaseResult } from './phase.js';
import { finishServerMetrics, serverMetricsLine } from './server-metrics-run.js';

/** What a finished run returns to the CLI. */
export interface RunOutcome {
  summary: Summary;
  /** Summary of the warmup phase, when there was one. */
  warmupSummary: Summary | null;
  /** The console report (also saved as `profile_export_console.txt`). */
  consoleText: string;
  artifactDir: string;
  wasCancelled: boolean;
  recordCount: number;
  /** Achieved request rate of a `--request-rate` run (issued − 1 over the span of intended sends); else null. */
  achievedRatePerS: number | null;
  /** Times the rate schedule fell more than the catch-up bound behind and re-anchored. */
  scheduleReanchors: number;
  /**
   * A bad trace row met while streaming the trace after its first row: reading stopped there, the
   * rows read before it were sent on their schedule, the summary covers them, and the CLI exits
   * non-zero with this error.
   */
  inputError: Error | null;
  /** How the run ended (the summary's `run_status`), with the exit code the CLI gives for it. */
  status: RunStatus;
}

/** Inputs of {@link finishRun}. */
export interface FinishInput {
  config: RunPlan;
  /** The profiling phase (it always runs; interrupted before start-up ended, it is empty). */
  profiling: PhaseResult;
  warmup: PhaseResult | null;
  strategy: LoadStrategy;
  synthesizer: PromptSynthesizer;
  /** Rows of `--input-file` the loader dropped, by reason; null without an input file. */
  inputSkipped?: SkipCounts | null;
  /** Where the requests were posted, e.g. `http://127.0.0.1:8000/v1/chat/completions`. */
  requestUrl: string;
  /** Where the tokenizer came from: the summary's `tokenizer` section and a console line. */
  tokenizer?: TokenizerSection;
  /**
   * `--apply-chat-template`: synthesized prompts of the profiling phase whose target length was below
   * the template's own tokens (their text is empty; their ISL is the template's).
   */
  template?: { shorterThanTemplate: number };
  /** What the `/metrics` scraper gathered; null or absent with `--no-server-metrics`. */
  serverMetrics?: ScrapeReport | null;
  /** The models the servers' `/v1/models` listed before the run; null or absent when unknown. */
  servedModels?: readonly string[] | null;
  /** The configuration as asked, written as `input_config` (a shard runs its share: shard/shard-run.ts). */
  askedConfig: ProfileConfig;
  /** A sharded or `--start-at` run: the summary's `shard` section, its console line and warnings (shard/start-at.ts). */
  shard?: ShardReport | null;
  /**
   * Warnings about the run's input and options, already logged when found (`--streaming` on an
   * endpoint that cannot stream, prompts beyond any context window); the summary keeps them too.
   */
  inputWarnings?: readonly string[];
}

/**
 * Summarizes and writes `profile_export_aiperf.json`, `profile_export_aiperf.csv` and
 * `profile_export_console.txt` into the artifact directory.
 * @throws the file system error of a failed write.
 */
export async function finishRun(input: FinishInput): Promise<RunOutcome> {
  const { config, profiling } = input;
  const summary = profiling.summary.build();
  const warmupSummary = input.warmup === null ? null : input.warmup.summary.build();
  summary.warnings.push(...runWarnings(input), ...responseWarnings(summary.responses, usageContext(config)));
  const inputError = feedErrorOf(profiling.load);
  const status = runStatusOf({
    summary,
    interrupted: profiling.interrupted,
    inputError,
    requestUrl: input.requestUrl,
    issued: sentCount(input),
    models: config.models,
    servedModels: input.servedModels ?? null,
  });
  const server = await finishServerMetrics(config, input.serverMetrics ?? null, summary.totals);
  const ctx: SummaryExportContext & { runStatus: RunStatus } = {
    summary,
    inputConfig: inputConfigOf(input.askedConfig),
    startTime: profiling.startTime,
    endTime: profiling.endTime,
    wasCancelled: profiling.interrupted,
    runStatus: status,
    extra: {
      ...extraSections(input, warmupSummary),
      responses: summary.responses,
      ...(server === null ? {} : { server_metrics: server }),
    },
  };
  const text = await writeConsoleAndSummaries(input, ctx, server);
  const report = await writeReport(config.artifactDir);
  const reportLine = `HTML Report: ${report.path} (${(report.bytes / 1e6).toFixed(2)} MB, built in ${Math.round(report.ms)} ms)`;
  const pacing = pacingOf(profiling.load);
  return {
    summary,
    warmupSummary,
    consoleText: `${text}${reportLine}\n`,
    artifactDir: config.artifactDir,
    wasCancelled: profiling.interrupted,
    recordCount: profiling.recordCount,
    achievedRatePerS: pacing?.achievedRatePerS ?? null,
    scheduleReanchors: pacing?.reanchors ?? 0,
    inputError,
    status,
  };
}

/**
 * Writes the summary JSON and CSV, then the console text (the run's lead lines, the server-metrics
 * line and the table, with the paths of what was written) to its file, and returns that text.
 */
async function writeConsoleAndSummaries(
  input: FinishInput,
  ctx: SummaryExportContext & { runStatus: RunStatus },
  server: ServerMetricsSection | null,
): Promise<string> {
  const dir = input.config.artifactDir;
  const files = await writeSummaryFiles(dir, ctx);
  const consoleText = EXPORTERS.console.render({
    ...ctx,
    artifacts: {
      json: files.summary_json,
      csv: files.summary_csv,
      jsonl: join(dir, RECORDS_FILE_NAME),
      inputs: join(dir, INPUTS_FILE_NAME),
      ...(server === null ? {} : serverMetricsPaths(dir)),
    },
  });
  const serverLine = server === null ? '' : `${serverMetricsLine(server)}\n`;
  const text = `${header(input, ctx.runStatus)}${serverLine}${consoleText}`;
  await writeFile(join(dir, EXPORTERS.console.fileName), text);
  return text;
}

/** The server-metrics files of a run that scraped: the JSON and CSV, and the JSONL when its scraper wrote it. */
function serverMetricsPaths(dir: string): ArtifactPaths {
  const jsonl = join(dir, SERVER_METRICS_JSONL_FILE_NAME);
  return {
    serverMetricsJson: join(dir, SERVER_METRICS_JSON_FILE_NAME),
    serverMetricsCsv: join(dir, SERVER_METRICS_CSV_FILE_NAME),
    ...(existsSync(jsonl) ? { serverMetricsJsonl: jsonl } : {}),
  };
}

/** Requests sent to the servers: the warmup phase's and the profiling phase's. */
function sentCount(input: FinishInput): number {
  return input.profiling.load.issued + (input.warmup?.load.issued ?? 0);
}

/** The error that stopped reading a streamed trace; null for other strategies and a clean read. */
function feedErrorOf(load: StrategyReport): Error | null {
  return load.kind === 'fixed_schedule' ? replayError(load.replay) : null;
}

function replayError(replay: ReplayReport): Error | null {
  const err = replay.feedError;
  if (err === null || err === undefined) return null;
  return err instanceof Error ? err : new Error(String(err));
}

/** The pacing facts of a request-rate run; null for other strategies. */
function pacingOf(load: StrategyReport): PacingReport | null {
  return load.kind === 'request_rate' ? load.pacing : null;
}

/**
 * How the run asked the server for `usage`, for the warning about answers without it: streamed chat
 * and completions ask with `stream_options.include_usage`, TGI with `parameters.details`; the others
 * (non-streamed OpenAI answers, the Responses API) carry it unasked.
 */
export function usageContext(
  config: Pick<ProfileConfig, 'endpointType' | 'streaming' | 'useServerTokenCount'>,
): ResponseWarningContext {
  const type = config.endpointType;
  let asked: string | null = null;
  if (type === 'huggingface_generate') asked = 'parameters.details';
  else if ((type === 'chat' || type === 'completions') && config.streaming)
    asked = 'stream_options.include_usage';
  return { useServerTokenCount: config.useServerTokenCount, usageAskedWith: asked };
}

function header(input: FinishInput, status: RunStatus): string {
  const lines = [`CLI Command: ${input.config.commandLine}`, loadLine(input.strategy.describe())];
  if (input.shard) lines.push(input.shard.line);
  if (input.tokenizer !== undefined) lines.push(tokenizerLine(input.tokenizer));
  // A run that measured nothing says so before anything else (client health included).
  const lead = statusLeadLine(status);
  if (status.exit_code === EXIT_NO_SUCCESS && lead !== null) lines.unshift(lead);
  const cut = input.profiling.cutoff;
  if (cut !== null && cut !== undefined) {
    lines.push(
      `Duration cut-off: ${cut.inFlightAtCutoff} requests in flight; ${cut.completedInGrace} completed in the grace period, ${cut.cancelledAfterGrace} cancelled after it`,
    );
  }
  const health = input.profiling.clientHealth;
  if (health !== undefined) lines.push(clientHealthLine(health));
  const connections = input.profiling.connections;
  if (connections !== undefined) lines.push(connectionsLine(connections));
  const startUp = input.profiling.startUp;
  if (startUp !== undefined) lines.push(startUpLine(startUp));
  for (const server of input.profiling.servers ?? []) lines.push(serverLine(server));
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

/** The console line of the tokenizer, e.g. `Tokenizer: org/name from the Hugging Face cache /…; chat template applied: /…`. */
function tokenizerLine(t: TokenizerSection): string {
  const template = t.chat_template === null ? '' : `; chat template applied: ${t.chat_template}`;
  return `Tokenizer: ${describeTokenizer(t)}${template}`;
}

/** The console line of the run's connections, e.g. `Connections: 120 pre-opened (…); 3 requests waited for a new one`. */
function connectionsLine(c: ConnectionsReport): string {
  const opened = `${c.prewarm.opened} pre-opened (${c.prewarm.basis})`;
  const failed = c.prewarm.failed > 0 ? `, ${c.prewarm.failed} failed to open` : '';
  const waited = c.requests_on_new_connections;
  return `Connections: ${opened}${failed}; ${waited} ${waited === 1 ? 'request' : 'requests'} waited for a new connection, ${c.requests_on_open_connections} reused an open one`;
}

/** A constant-rate run this far short of its target (%) is reported as client-saturated. */
const SHORTFALL_WARN_PCT = 0.1;

function runWarnings(input: FinishInput): string[] {
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
  const conflicts = input.synthesizer.blocks.sizeConflicts;
  if (conflicts > 0) out.push(blockSizeWarning(conflicts));
  const load = input.profiling.load;
  switch (load.kind) {
    case 'fixed_schedule':
      out.push(...replayWarnings(load.replay));
      break;
    case 'request_rate':
      out.push(...pacingWarnings(input.config, load));
      break;
    case 'concurrency':
      break;
  }
  return out;
}

/** A saturation warning when a request-rate run fell short of the rate asked for (at most one). */
function pacingWarnings(config: RunPlan, load: RequestRateReport): string[] {
  const { pacing, issued } = load;
  if (config.load.kind !== 'request_rate' || !(pacing.achievedRatePerS > 0)) return [];
  const target = config.load.rate.ratePerS;
  const shortPct = (100 * (target - pacing.achievedRatePerS)) / target;
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
    `client saturated: achieved ${pacing.achievedRatePerS.toFixed(1)} req/s of the ${target} req/s asked (${shortPct.toFixed(2)} % short, ${pacing.reanchors} schedule re-anchors after falling > ${DEFAULT_MAX_CATCHUP_NS / 1e6} ms behind, skipping ~${Math.round(pacing.skippedArrivals)} arrivals); the load generator, not the server, limited this run`,
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

function extraSections(input: FinishInput, warmupSummary: Summary | null): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  if (warmupSummary !== null) extra.warmup_metrics = warmupSummary.metrics;
  const cut = input.profiling.cutoff;
  if (cut !== null && cut !== undefined) {
    extra.duration_cutoff = {
      in_flight_at_cutoff: cut.inFlightAtCutoff,
      completed_in_grace: cut.completedInGrace,
      cancelled_after_grace: cut.cancelledAfterGrace,
    };
  }
  if (input.tokenizer !== undefined) extra.tokenizer = input.tokenizer;
  if (input.shard) extra.shard = input.shard.section;
  extra.load = { strategy: input.strategy.name, description: input.strategy.describe() };
  if (input.profiling.clientHealth !== undefined) extra.client_health = input.profiling.clientHealth;
  if (input.profiling.connections !== undefined) extra.connections = input.profiling.connections;
  if (input.profiling.startUp !== undefined) extra.start_up = input.profiling.startUp;
  if (input.profiling.servers !== undefined) extra.servers = input.profiling.servers;
  const skipped = input.inputSkipped;
  if (skipped !== undefined && skipped !== null) {
    extra.input_rows_skipped = {
      before_start_offset: skipped.beforeStartOffset,
      after_end_offset: skipped.afterEndOffset,
      bad_lines: skipped.badLines,
      ...(skipped.invalidRows === undefined ? {} : { invalid_rows: skipped.invalidRows }),
      unread_after_line: skipped.unreadAfterLine ?? null,
      ...synthesisCounts(skipped),
    };
  }
  return { ...extra, ...loadSection(input.profiling.load) };
}

/** The trace synthesis counts of `input_rows_skipped`, each present when its option is set. */
function synthesisCounts(skipped: SkipCounts): Record<string, number> {
  const out: Record<string, number> = {};
  if (skipped.overMaxIsl !== undefined) out.over_max_isl = skipped.overMaxIsl;
  if (skipped.maxOslCapped !== undefined) out.max_osl_capped = skipped.maxOslCapped;
  if (skipped.promptUnscaled !== undefined) out.prompt_unscaled = skipped.promptUnscaled;
  return out;
}

/** The summary section of the strategy's own facts: `replay` for a fixed schedule, `pacing` for a rate. */
function loadSection(load: StrategyReport): Record<string, unknown> {
  switch (load.kind) {
    case 'fixed_schedule':
      return {
        replay: {
          rows_read: load.replay.rowsRead,
          sessions: load.replay.sessions,
          zero_trace_ms: load.replay.zeroMs,
          out_of_order_sessions: load.replay.outOfOrderSessions,
          input_error: replayError(load.replay)?.message ?? null,
        },
      };
    case 'request_rate':
      return {
        pacing: {
          achieved_request_rate: load.pacing.achievedRatePerS,
          schedule_reanchors: load.pacing.reanchors,
          skipped_arrivals: Math.round(load.pacing.skippedArrivals),
        },
      };
    case 'concurrency':
      return {};
  }
}
