/**
 * AIPerf's nested configuration layout (its `UserConfig`: `endpoint`, `input` with `prompt` and
 * `conversation`, `tokenizer`, `loadgen`, `output`, `workers`), as AIPerf writes it under
 * `input_config` in `profile_export_aiperf.json` and reads it from an older-style YAML config file.
 * tokenload's configuration is flat (one key per flag, ./fields-*.ts); {@link AIPERF_CONFIG_PATHS}
 * pairs each tokenload field that has an AIPerf key with that key's path, the one table both
 * directions use. Key names are AIPerf's config field names (source: AIPerf's
 * `src/aiperf/common/config/*_config.py`; the multi-URL `endpoint.urls` from its multi-URL docs).
 */
import { setAt, valueAt } from '../util/option-meta.js';

/**
 * `[tokenload field path, AIPerf path]`, dot-separated. Units are the same on both sides (the flags
 * share their units: ms for offsets and turn delays, s for durations, % for the cancellation rate).
 * A tokenload field without a row has no AIPerf key; it stays in the summary's `tokenload_config`.
 */
export const AIPERF_CONFIG_PATHS: ReadonlyArray<readonly [string, string]> = [
  ['models', 'endpoint.model_names'],
  ['url', 'endpoint.urls'],
  ['endpointType', 'endpoint.type'],
  ['endpointPath', 'endpoint.custom_endpoint'],
  ['streaming', 'endpoint.streaming'],
  ['requestTimeoutSeconds', 'endpoint.timeout_seconds'],
  ['apiKey', 'endpoint.api_key'],
  ['useLegacyMaxTokens', 'endpoint.use_legacy_max_tokens'],
  ['useServerTokenCount', 'endpoint.use_server_token_count'],
  ['extraInputs', 'input.extra'],
  ['headers', 'input.headers'],
  ['inputFile', 'input.file'],
  ['customDatasetType', 'input.custom_dataset_type'],
  ['datasetSamplingStrategy', 'input.dataset_sampling_strategy'],
  ['fixedSchedule', 'input.fixed_schedule'],
  ['fixedScheduleAutoOffset', 'input.fixed_schedule_auto_offset'],
  ['fixedScheduleStartOffsetMs', 'input.fixed_schedule_start_offset'],
  ['fixedScheduleEndOffsetMs', 'input.fixed_schedule_end_offset'],
  ['randomSeed', 'input.random_seed'],
  ['goodput', 'input.goodput'],
  ['synthetic.isl', 'input.prompt.input_tokens.mean'],
  ['synthetic.islStddev', 'input.prompt.input_tokens.stddev'],
  ['islBlockSize', 'input.prompt.input_tokens.block_size'],
  ['synthetic.osl', 'input.prompt.output_tokens.mean'],
  ['synthetic.oslStddev', 'input.prompt.output_tokens.stddev'],
  ['synthetic.seqDist', 'input.prompt.sequence_distribution'],
  ['synthetic.numPrefixPrompts', 'input.prompt.prefix_prompt.pool_size'],
  ['synthetic.prefixPromptLength', 'input.prompt.prefix_prompt.length'],
  ['conversationNum', 'input.conversation.num'],
  ['synthetic.numDatasetEntries', 'input.conversation.num_dataset_entries'],
  ['synthetic.sessionTurnsMean', 'input.conversation.turn.mean'],
  ['synthetic.sessionTurnsStddev', 'input.conversation.turn.stddev'],
  ['synthetic.sessionTurnDelayMeanMs', 'input.conversation.turn.delay.mean'],
  ['synthetic.sessionTurnDelayStddevMs', 'input.conversation.turn.delay.stddev'],
  ['synthetic.sessionTurnDelayRatio', 'input.conversation.turn.delay.ratio'],
  ['tokenizer', 'tokenizer.name'],
  ['tokenizerRevision', 'tokenizer.revision'],
  ['concurrency', 'loadgen.concurrency'],
  ['requestRate', 'loadgen.request_rate'],
  ['requestRateSeries', 'loadgen.request_rate_series'],
  ['arrivalPattern', 'loadgen.request_rate_mode'],
  ['requestCount', 'loadgen.request_count'],
  ['benchmarkDurationSeconds', 'loadgen.benchmark_duration'],
  ['gracePeriodSeconds', 'loadgen.benchmark_grace_period'],
  ['failedRequestThreshold', 'loadgen.failed_request_threshold'],
  ['warmupRequestCount', 'loadgen.warmup_request_count'],
  ['numWarmupSessions', 'loadgen.warmup_num_sessions'],
  ['warmupConcurrency', 'loadgen.warmup_concurrency'],
  ['warmupPrefillConcurrency', 'loadgen.warmup_prefill_concurrency'],
  ['warmupRequestRate', 'loadgen.warmup_request_rate'],
  ['warmupArrivalPattern', 'loadgen.warmup_arrival_pattern'],
  ['warmupGracePeriodSeconds', 'loadgen.warmup_grace_period'],
  ['prefillConcurrency', 'loadgen.prefill_concurrency'],
  ['requestCancellationRatePct', 'loadgen.request_cancellation_rate'],
  ['requestCancellationDelaySeconds', 'loadgen.request_cancellation_delay'],
  ['artifactDir', 'output.artifact_directory'],
  ['exportLevel', 'output.export_level'],
  ['workers', 'workers.max'],
  ['commandLine', 'cli_command'],
];

/**
 * `config` (tokenload's flat configuration, e.g. the redacted one of `input_config.ts`) in AIPerf's
 * nested layout: every field of {@link AIPERF_CONFIG_PATHS} that has a value, at its AIPerf path.
 * Fields without an AIPerf key are left out (the summary keeps them in `tokenload_config`).
 */
export function aiperfInputConfigOf(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [ours, theirs] of AIPERF_CONFIG_PATHS) {
    const value = valueAt(config, ours.split('.'));
    if (value !== undefined) setAt(out, theirs.split('.'), structuredClone(value));
  }
  return out;
}
