/**
 * End of a run: summarize the records and write the summary artifacts and the console copy.
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aiperfInputConfigOf } from '../config/aiperf-layout.js';
import { inputConfigOf } from '../config/input-config.js';
import type { RunPlan } from '../config/plan.js';
import type { ProfileConfig } from '../config/resolve.js';
import { VERBATIM_DATASET_TYPES } from '../dataset/registry.js';
import type { ArtifactPaths } from '../export/console-table.js';
import {
  EXPORTERS,
  INPUTS_FILE_NAME,
  RAW_RECORDS_FILE_NAME,
  RECORDS_FILE_NAME,
  writeSummaryFiles,
} from '../export/index.js';
import { type RunStatus, runStatusOf } from '../export/run-status.js';
import type { SummaryExportContext } from '../export/summary-json.js';
import { type ResponseWarningContext, responseWarnings } from '../metrics/response-checks.js';
import type { Summary } from '../metrics/summary.js';
import { writeReport } from '../report/html.js';
import {
  SERVER_METRICS_CSV_FILE_NAME,
  SERVER_METRICS_JSON_FILE_NAME,
  SERVER_METRICS_JSONL_FILE_NAME,
} from '../server-metrics/exports.js';
import type { GpuTelemetrySection } from '../server-metrics/gpu-exports.js';
import type { ServerMetricsSection } from '../server-metrics/section.js';
import { analyzeRun, type RunAnalysis } from './analysis-run.js';
import { header } from './console-head.js';
import { failureStopReason } from './failure-stop.js';
import { type FinishInput, feedErrorOf, pacingOf, sentCount } from './finish-input.js';
import { finishGpuTelemetry, gpuTelemetryLine, gpuTelemetryPaths } from './gpu-telemetry-run.js';
import { runWarnings } from './run-warnings.js';
import {
  finishServerMetrics,
  pruneServerMetricsFiles,
  serverMetricsFormatsOf,
  serverMetricsLine,
} from './server-metrics-run.js';
import { extraSections, tailsSection } from './summary-sections.js';
import { writeTimeslices } from './timeslices-run.js';

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

/**
 * Summarizes and writes `profile_export_aiperf.json`, `profile_export_aiperf.csv` and
 * `profile_export_console.txt` into the artifact directory.
 * @throws the file system error of a failed write.
 */
export async function finishRun(input: FinishInput): Promise<RunOutcome> {
  const { config, profiling } = input;
  const summary = profiling.summary.build();
  const warmupSummary = input.warmup === null ? null : input.warmup.summary.build();
  summary.warnings.push(
    ...runWarnings(input),
    ...responseWarnings(summary.responses, usageContext(config, sendsVerbatimBodies(config))),
  );
  const analysis = await analyzeRun(input, summary);
  summary.warnings.push(...analysis.warnings);
  const inputError = feedErrorOf(profiling.load);
  const status = runStatusOf({
    summary,
    interrupted: profiling.interrupted,
    inputError,
    requestUrl: input.requestUrl,
    issued: sentCount(input),
    models: config.models,
    servedModels: input.servedModels ?? null,
    failureStop: profiling.failureStop?.tripped === true ? failureStopReason(profiling.failureStop) : null,
  });
  const server = await finishServerMetrics(config, input.serverMetrics ?? null, summary.totals);
  const gpu = await finishGpuTelemetry(config, input.gpuTelemetry ?? null, summary.totals);
  const ctx: SummaryExportContext & { runStatus: RunStatus } = {
    summary,
    inputConfig: inputConfigOf(input.askedConfig),
    aiperfInputConfig: aiperfInputConfigOf(inputConfigOf(input.askedConfig)),
    runInfo: input.runInfo,
    startTime: profiling.startTime,
    endTime: profiling.endTime,
    wasCancelled: profiling.interrupted,
    runStatus: status,
    extra: {
      ...extraSections(input, warmupSummary),
      responses: summary.responses,
      ...tailsSection(summary),
      ...(analysis.steadyState === null ? {} : { steady_state: analysis.steadyState }),
      ...(analysis.serverVerdict === null ? {} : { server_verdict: analysis.serverVerdict }),
      ...(server === null ? {} : { server_metrics: server }),
      ...(gpu === null ? {} : { gpu_telemetry: gpu }),
    },
  };
  const text = await writeConsoleAndSummaries(input, ctx, { server, gpu }, analysis);
  const report = await writeReport(config.artifactDir);
  await pruneAfterReport(config);
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
  scraped: { server: ServerMetricsSection | null; gpu: GpuTelemetrySection | null },
  analysis: RunAnalysis,
): Promise<string> {
  const { server, gpu } = scraped;
  const verdict = analysis.serverVerdict;
  const dir = input.config.artifactDir;
  const files = await writeSummaryFiles(dir, ctx);
  const slices = await timeslicePaths(input, ctx);
  const consoleText = EXPORTERS.console.render({
    ...ctx,
    afterTable: analysis.lines,
    artifacts: {
      json: files.summary_json,
      csv: files.summary_csv,
      ...(input.config.exportLevel === 'summary' ? {} : { jsonl: join(dir, RECORDS_FILE_NAME) }),
      ...(input.config.exportLevel === 'raw' ? { raw: join(dir, RAW_RECORDS_FILE_NAME) } : {}),
      inputs: join(dir, INPUTS_FILE_NAME),
      ...slices,
      ...(server === null ? {} : serverMetricsPaths(input.config)),
      ...(gpu === null ? {} : gpuTelemetryPaths(dir)),
    },
  });
  const serverLine = server === null ? '' : `${serverMetricsLine(server)}\n`;
  const gpuLine = gpu === null ? '' : `${gpuTelemetryLine(gpu)}\n`;
  const text = `${header(input, ctx.runStatus, verdict)}${serverLine}${gpuLine}${consoleText}`;
  await writeFile(join(dir, EXPORTERS.console.fileName), text);
  return text;
}

/**
 * With `--slice-duration`, writes the time-slice files (./timeslices-run.ts) and returns their paths;
 * nothing without it, or when the run has no records.
 */
async function timeslicePaths(input: FinishInput, ctx: SummaryExportContext): Promise<ArtifactPaths> {
  const { config, profiling } = input;
  const firstStartNs = profiling.summary.firstStartNs;
  if (config.sliceDurationSeconds === undefined || firstStartNs === null) return {};
  const files = await writeTimeslices({
    artifactDir: config.artifactDir,
    sliceSeconds: config.sliceDurationSeconds,
    firstStartNs,
    streaming: config.streaming,
    summarize: profiling.summary.options,
    inputConfig: ctx.inputConfig,
  });
  return { timeslicesJson: files.json, timeslicesCsv: files.csv };
}

/**
 * The server-metrics files of a run that scraped, those kept (`--server-metrics-formats`) and written:
 * none when no endpoint answered.
 */
function serverMetricsPaths(config: RunPlan): ArtifactPaths {
  const dir = config.artifactDir;
  const formats = serverMetricsFormatsOf(config);
  const kept = (format: string, name: string): string | null => {
    const path = join(dir, name);
    return formats.has(format) && existsSync(path) ? path : null;
  };
  const json = kept('json', SERVER_METRICS_JSON_FILE_NAME);
  const csv = kept('csv', SERVER_METRICS_CSV_FILE_NAME);
  const jsonl = kept('jsonl', SERVER_METRICS_JSONL_FILE_NAME);
  return {
    ...(json === null ? {} : { serverMetricsJson: json }),
    ...(csv === null ? {} : { serverMetricsCsv: csv }),
    ...(jsonl === null ? {} : { serverMetricsJsonl: jsonl }),
  };
}

/**
 * Removes what served the report but was not asked for: `profile_export.jsonl` with
 * `--export-level summary` (AIPerf's level keeps only summaries), `server_metrics_export.jsonl` when
 * `--server-metrics-formats` leaves it out.
 */
async function pruneAfterReport(config: RunPlan): Promise<void> {
  if (config.exportLevel === 'summary')
    await rm(join(config.artifactDir, RECORDS_FILE_NAME), { force: true });
  await pruneServerMetricsFiles(config);
}

/** Whether every request of the run is a body read from its input file (`inputs_json`, `raw_payload`). */
function sendsVerbatimBodies(config: RunPlan): boolean {
  return config.input.kind === 'file' && VERBATIM_DATASET_TYPES.has(config.input.datasetType);
}

/**
 * How the run asked the server for `usage`, for the warning about answers without it: streamed chat
 * and completions ask with `stream_options.include_usage`, TGI with `parameters.details`; the others
 * (non-streamed OpenAI answers, the Responses API) carry it unasked. Verbatim bodies (`verbatim`:
 * `inputs_json`, `raw_payload`) ask for whatever they hold, which tokenload does not change.
 */
export function usageContext(
  config: Pick<ProfileConfig, 'endpointType' | 'streaming' | 'useServerTokenCount'>,
  verbatim = false,
): ResponseWarningContext {
  const type = config.endpointType;
  let asked: string | null = null;
  if (verbatim) asked = null;
  else if (type === 'huggingface_generate') asked = 'parameters.details';
  else if ((type === 'chat' || type === 'completions') && config.streaming)
    asked = 'stream_options.include_usage';
  return { useServerTokenCount: config.useServerTokenCount, usageAskedWith: asked };
}
