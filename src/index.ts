/**
 * tokenload's library API: a deliberate list, stage by stage. What is not exported here is internal
 * and may change without notice; every process-level error class and the configuration schema are.
 * Sorted by source folder, which is the pipeline stage.
 *
 *     import { profileConfig, runProfile } from 'tokenload';
 *     const outcome = await runProfile(
 *       profileConfig({ models: ['Qwen/Qwen3-0.6B'], randomSeed: 1, inputFile: 'trace.jsonl',
 *                       customDatasetType: 'bailian_trace', streaming: true, simulator: true,
 *                       artifactDir: 'artifacts/run1', ui: 'none' }),
 *       { log: console, stopSignal: new AbortController().signal });
 */

export { SynthesisError } from './analyze/synthesize-trace.js';
export { parseProfileArgs } from './cli/profile-command.js';
export type { HttpClient, SendRequest } from './client/types.js';
export { createHttpClient } from './client/undici-client.js';
export { type ProfileConfigInput, ProfileFieldsSchema } from './config/fields.js';
export type { ProfileConfig } from './config/resolve.js';
export { ProfileConfigSchema, profileConfig } from './config/schema.js';
export { profileConfigs, type SweepInput } from './config/sweep.js';
export {
  type ChatMessage,
  type Conversation,
  DATASET_LOADERS,
  DATASET_TYPE_NAMES,
  type Dataset,
  DatasetError,
  type DatasetLoader,
  type DatasetTypeName,
  generateSyntheticDataset,
  getDatasetLoader,
  idealPrefixHit,
  type LoadOptions,
  type PrefixHitStats,
  type SourceRef,
  type StreamedTurn,
  SyntheticOptionError,
  type TraceId,
  type TraceStream,
  type Turn,
} from './dataset/index.js';
export {
  type SessionSampleSpec,
  sessionSampleKey,
  sessionSampler,
} from './dataset/session-sample.js';
export { fnv1a64, type ShardSpec, sessionShard } from './dataset/shard.js';
export { type SyntheticDatasetOptions, SyntheticOptionsSchema } from './dataset/synthetic-options.js';
export { ENDPOINT_TYPES, ENDPOINTS, type EndpointTypeName } from './endpoint/registry.js';
export type { EndpointAdapter } from './endpoint/types.js';
export {
  ConfigError,
  ERROR_CODES,
  type ErrorCode,
  EXIT_INTERNAL,
  EXIT_INTERRUPTED,
  EXIT_NO_SUCCESS,
  exitCodeOf,
  InterruptedError,
  OutputError,
  TokenloadError,
} from './errors.js';
export {
  INPUTS_FILE_NAME,
  RECORDS_FILE_NAME,
  REDACTED,
  type RunStatus,
  redactConfig,
  SUMMARY_CSV_FILE_NAME,
  SUMMARY_JSON_FILE_NAME,
} from './export/index.js';
export { EpochBase, RecordLineError, readRecordLine } from './export/record-reader.js';
export { type MergeOutcome, mergeShards } from './merge/merge-run.js';
export { type MergeOptions, type MergeOptionsInput, MergeOptionsSchema } from './merge/options.js';
export { ShardSetError } from './merge/shard-set.js';
export {
  computeStats,
  GoodputParseError,
  METRICS,
  type MetricDef,
  type MetricTag,
  metricByTag,
  PERCENTILES,
  parseGoodput,
  type Slo,
  type Stats,
  type Summary,
} from './metrics/index.js';
export { ServerUnreachableError } from './preflight/preflight.js';
export { PromptSynthesisError, PromptSynthesizer } from './prompt/synthesizer.js';
export {
  BUILTIN_TOKENIZER,
  loadTokenizer,
  type TextTokenizer,
  TokenizerLoadError,
} from './prompt/tokenizer.js';
export { FAILURE_CODES } from './record/failure.js';
export type {
  ErrorKind,
  LineRecord,
  ProcessedRecord,
  RawRecord,
  RecordError,
  RequestIdentity,
  Usage,
} from './record/types.js';
export {
  COMPARE_FILE_NAME,
  compareRuns,
  loadRun,
  REPORT_FILE_NAME,
  type RunData,
  RunLoadError,
  type RunSummary,
  renderReportHtml,
  writePlots,
  writeReport,
} from './report/index.js';
export type { RunOutcome } from './run/finish.js';
export { runProfile } from './run/profile.js';
export type { SearchFlags } from './search/config.js';
export type { SearchHistory } from './search/history-types.js';
export type { SearchResult } from './search/run-search.js';
/** `tokenload search` as a library call: the largest load meeting the SLOs (docs/search.md). */
export { type RunSearchOptions, runSearch } from './search/search.js';
export type { ClockOffset } from './shard/clock-offset.js';
export type { ShardSection } from './shard/start-at.js';
export {
  type SimulatorOptions,
  type SimulatorOptionsInput,
  SimulatorOptionsSchema,
} from './simulator/options.js';
export { startSimulator } from './simulator/server.js';
export { SimulatorSpawnError, spawnSimulator } from './simulator/spawn.js';
export { type Clock, monotonicNowNs, TimeBase } from './timing/clock.js';
export { RealClock } from './timing/real-clock.js';
export { ScheduleError } from './timing/schedule-feed.js';
export { VirtualClock } from './timing/virtual-clock.js';
export type { Logger, RunEnv } from './util/run-env.js';
