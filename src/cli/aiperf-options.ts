/**
 * Every `aiperf profile` option (the inventory in the AIPerf spec notes, §3, with the other long
 * names AIPerf's own CLI reference gives each) and how `tokenload profile` takes it: under the same
 * name, as AIPerf's name for one of ours (an alias), accepted with no effect where AIPerf's value is
 * the only thing tokenload does, or refused with the reason. The one source of the argv mapping
 * (./aiperf-args.ts), the `--help` alias notes, the config-file keys and the table of docs/aiperf.md
 * (`npm run docs:flags` writes it).
 */

import { AIPERF_ONLY_ENDPOINT_TYPES } from '../endpoint/aiperf-only.js';
import { ENDPOINT_TYPES } from '../endpoint/registry.js';

/** How tokenload takes one AIPerf option. */
export type AiperfStatus =
  /** The same flag with AIPerf's meaning; `note` says where it differs in detail. */
  | { kind: 'same'; note?: string }
  /** AIPerf's name for tokenload's `ours` (same meaning, `note` for details); rewritten before parsing. */
  | { kind: 'alias'; ours: string; note?: string }
  /**
   * Accepted and dropped: AIPerf's `value` (or the flag itself, for a flag without a value) asks for
   * what tokenload always does (`why`); any other value is refused with `why`.
   */
  | { kind: 'accepted'; value?: string; why: string; anyValue?: true }
  /** Refused before anything runs, with `why` (exit code 2). */
  | { kind: 'refused'; why: string };

/** One AIPerf option. */
export interface AiperfOption {
  /** AIPerf's flag as typed: `--synthetic-input-tokens-mean`, `-b`. */
  flag: string;
  /** Its group in `aiperf profile --help`. */
  group: string;
  status: AiperfStatus;
  /**
   * Alias rows: what follows the flag in a test of it (its value, and any flag the value needs),
   * e.g. `['constant', '--request-rate', '5']`; empty for a flag without a value.
   */
  example?: readonly string[];
}

const row =
  (group: string) =>
  (flag: string, status: AiperfStatus, example?: readonly string[]): AiperfOption => ({
    flag,
    group,
    status,
    ...(example === undefined ? {} : { example }),
  });
const same = (note?: string): AiperfStatus =>
  note === undefined ? { kind: 'same' } : { kind: 'same', note };
const alias = (ours: string, note?: string): AiperfStatus =>
  note === undefined ? { kind: 'alias', ours } : { kind: 'alias', ours, note };
const refused = (why: string): AiperfStatus => ({ kind: 'refused', why });
const accepted = (why: string, value?: string): AiperfStatus =>
  value === undefined ? { kind: 'accepted', why } : { kind: 'accepted', value, why };
/** Accepted with whatever value it is given, which changes nothing (`--log-level DEBUG`). */
const ignored = (why: string): AiperfStatus => ({ kind: 'accepted', why, anyValue: true });

const NOT_YET = 'not implemented in tokenload yet';
const ONE_LEVEL =
  'tokenload has one log level: progress and warnings on stderr, every failed request in profile_export.jsonl with its cause';
const TEXT_ONLY =
  'tokenload synthesizes text prompts only: no images, audio or video (planned: images first); give multimodal requests verbatim with --custom-dataset-type raw_payload';
const NO_SIGV4 =
  'tokenload does not sign requests with AWS SigV4: run a signing proxy on loopback (e.g. aws-sigv4-proxy) and point --url at it';
const NO_LIVE_EXPORT =
  'tokenload streams no telemetry to OpenTelemetry or MLflow (not planned): upload the artifact files after the run (profile_export.jsonl grows as requests complete)';
const NO_ACCURACY = 'tokenload measures serving performance, not answer accuracy (not planned)';
const IN_SEARCH =
  'tokenload searches in a command of its own: `tokenload search --search-over X --search-range LO,HI` (X: request-rate, concurrency or speedup) with this flag (docs/search.md)';
const SEARCH_RECIPE =
  'tokenload searches in a command of its own: max-concurrency-under-sla is `tokenload search --search-over concurrency --search-range 1,1000` with the SLO flags, max-goodput-under-slo adds `--slo-attainment-fraction F` (docs/search.md)';
const NO_SEARCH_STYLE =
  'tokenload search has one planner (a monotone fit of every SLO margin, bracketed then narrowed, re-probing ends whose interval straddles the SLO; docs/search.md), and no objective to maximize: use `tokenload search`';
const RANKINGS_SYNTHETIC = `${NOT_YET}: synthetic rankings inputs; give each query and its passages in --input-file (single_turn, texts named query and passages; docs/endpoints.md)`;

const endpoint = row('Endpoint');
const tokenizer = row('Tokenizer');
const input = row('Input');
const schedule = row('Fixed schedule');
const conversation = row('Conversation');
const prompt = row('Prompt / ISL / OSL');
const synthesis = row('Synthesis');
const rankings = row('Rankings');
const load = row('Load generator');
const warmup = row('Warmup');
const cancellation = row('Request cancellation');
const output = row('Output');
const telemetry = row('Telemetry');
const ui = row('UI');
const multiRun = row('Multi-run');
const service = row('Workers / service');
const multimodal = row('Multimodal input');
const auth = row('Authentication');
const liveExport = row('Live telemetry export');
const accuracy = row('Accuracy');
const search = row('Search');

/** Every `aiperf profile` option, grouped as AIPerf groups them. */
export const AIPERF_OPTIONS: readonly AiperfOption[] = [
  endpoint('--model', same('a comma list or the flag repeated; models round-robin per request')),
  endpoint('-m', same()),
  endpoint('--model-names', alias('--model'), ['a,b']),
  endpoint(
    '--model-selection-strategy',
    accepted('tokenload assigns models round-robin only', 'round_robin'),
  ),
  endpoint('--url', same('repeatable and a comma list; several servers get the sessions round-robin')),
  endpoint('-u', same()),
  endpoint(
    '--url-strategy',
    accepted(
      'tokenload spreads sessions round-robin over the servers (AIPerf assigns each request on its own; tokenload keeps every turn of a session on one server)',
      'round_robin',
    ),
  ),
  endpoint(
    '--endpoint-type',
    same(
      `types: ${ENDPOINT_TYPES.join(', ')} (docs/endpoints.md); AIPerf's ${Object.keys(AIPERF_ONLY_ENDPOINT_TYPES).join(', ')} are refused, each with its reason and the nearest tokenload way`,
    ),
  ),
  endpoint('--custom-endpoint', alias('--endpoint'), ['/v1/custom/chat']),
  endpoint('--endpoint', same()),
  endpoint('--streaming', same()),
  endpoint('--request-timeout-seconds', same()),
  endpoint('--api-key', same()),
  endpoint('--use-legacy-max-tokens', same()),
  endpoint('--use-server-token-count', same()),
  endpoint(
    '--connection-reuse-strategy',
    accepted(
      'tokenload keeps one keep-alive connection pool per server; a new connection per request or per session is not implemented',
      'pooled',
    ),
  ),
  endpoint(
    '--wait-for-model-timeout',
    same('every --url server is polled; 0 (the default) checks once that each answers'),
  ),
  endpoint('--wait-for-model-mode', same('models, inference (the default) or both')),
  endpoint('--wait-for-model-interval', same()),
  endpoint(
    '--session-header',
    same(
      'repeatable; each named header carries the session id besides X-Correlation-ID and X-Session-Affinity, which are always sent (AIPerf’s renames X-Correlation-ID)',
    ),
  ),
  endpoint('--transport', accepted('tokenload speaks HTTP/1.1 (http and https URLs) only', 'http')),
  endpoint('--transport-type', accepted('tokenload speaks HTTP/1.1 (http and https URLs) only', 'http')),
  tokenizer(
    '--tokenizer',
    same(
      'a Hugging Face model id (local cache, then the Hub), a local tokenizer.json or model folder, or `builtin` (the bundled Qwen3 vocabulary)',
    ),
  ),
  tokenizer('--tokenizer-revision', same()),
  tokenizer(
    '--tokenizer-trust-remote-code',
    refused('tokenload reads tokenizer.json with its own tokenizer and runs no code from a model repository'),
  ),
  tokenizer(
    '--apply-chat-template',
    same('ISL counts the templated prompt, as the server counts prompt tokens'),
  ),
  input('--input-file', same()),
  input('--custom-dataset-type', same()),
  input(
    '--public-dataset',
    refused(
      'tokenload downloads no datasets and does not read a public dataset’s own format yet (planned: sharegpt from a local copy of ShareGPT_V3_unfiltered_cleaned_split.json, https://huggingface.co/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/ShareGPT_V3_unfiltered_cleaned_split.json); give the prompts as an --input-file with --custom-dataset-type multi_turn or single_turn',
    ),
  ),
  input(
    '--extra-inputs',
    same(
      'repeat the flag, or list several values after it; payload_template and response_field set up --endpoint-type template (response_field a field path, not all of JMESPath)',
    ),
  ),
  input('--header', same('repeat the flag, or list several values after it')),
  input('-H', same()),
  input('--dataset-sampling-strategy', same()),
  input('--random-seed', same()),
  input(
    '--trace-session-sample-ratio',
    same(
      'every input file with sessions (AIPerf: baseten_trace); whole sessions, a Bailian tree as one, chosen by a hash of the id and --random-seed',
    ),
  ),
  input('--ignore-trace-delays', refused(`${NOT_YET}: a dataset's per-turn delays are always honoured`)),
  input(
    '--config',
    same(
      'a flat YAML/JSON file of flag: value pairs (AIPerf names work as keys), or AIPerf’s sectioned layout (schemaVersion 2.0, or endpoint:/input:/loadgen:): its keys tokenload has are read, a file with any other is refused naming each key path',
    ),
  ),
  input('-f', same()),
  schedule('--fixed-schedule', same()),
  schedule('--no-fixed-schedule', same()),
  schedule('--fixed-schedule-auto-offset', same('on by default in tokenload (off in AIPerf mainline)')),
  schedule('--fixed-schedule-start-offset', same()),
  schedule('--fixed-schedule-end-offset', same()),
  schedule(
    '--open-loop-replay',
    same(
      'the default: a session’s later turns at their own timestamps; AIPerf has it for baseten_trace, tokenload for every trace replayed on a fixed schedule',
    ),
  ),
  schedule(
    '--no-open-loop-replay',
    same(
      'closed loop: each later turn after the previous answer plus the gap between the two rows’ timestamps',
    ),
  ),
  schedule(
    '--trace-idle-gap-cap-seconds',
    same(
      'for every trace replayed on a fixed schedule, gaps within one session only; what it changed is counted in the summary’s `replay.idle_gap_cap`',
    ),
  ),
  schedule(
    '--system-idle-gap-cap-seconds',
    refused(
      `${NOT_YET}: shortening the quiet stretches between sessions moves whole sessions on the trace’s clock; --trace-idle-gap-cap-seconds caps the gaps within one session`,
    ),
  ),
  row('Goodput')('--goodput', same()),
  conversation(
    '--conversation-num',
    same(
      'sessions run; the run ends when they complete unless --request-count or --benchmark-duration stops it first',
    ),
  ),
  conversation('--num-conversations', alias('--conversation-num'), ['20']),
  conversation('--num-sessions', alias('--conversation-num'), ['20']),
  conversation(
    '--num-dataset-entries',
    same(
      'tokenload generates this many conversations (AIPerf: unique user turns); --conversation-num sets it too',
    ),
  ),
  conversation('--num-prompts', alias('--num-dataset-entries'), ['20']),
  conversation('--session-turns-mean', same()),
  conversation('--conversation-turn-mean', alias('--session-turns-mean'), ['3']),
  conversation('--session-turns-stddev', same()),
  conversation('--conversation-turn-stddev', alias('--session-turns-stddev'), ['1']),
  conversation('--session-turn-delay-mean', same()),
  conversation('--conversation-turn-delay-mean', alias('--session-turn-delay-mean'), ['250']),
  conversation('--session-turn-delay-stddev', same()),
  conversation('--conversation-turn-delay-stddev', alias('--session-turn-delay-stddev'), ['50']),
  conversation('--session-turn-delay-ratio', same()),
  conversation('--conversation-turn-delay-ratio', alias('--session-turn-delay-ratio'), ['0.5']),
  conversation('--session-delay-ratio', alias('--session-turn-delay-ratio'), ['0.5']),
  prompt('--batch-size', refused('tokenload sends one input per request (embeddings included)')),
  prompt('-b', refused('tokenload sends one input per request (embeddings included)')),
  prompt('--prompt-batch-size', refused('tokenload sends one input per request (embeddings included)')),
  prompt('--batch-size-text', refused('tokenload sends one input per request (embeddings included)')),
  prompt('--isl', same()),
  prompt('--synthetic-input-tokens-mean', alias('--isl'), ['128']),
  prompt('--prompt-input-tokens-mean', alias('--isl'), ['128']),
  prompt('--isl-stddev', same()),
  prompt('--synthetic-input-tokens-stddev', alias('--isl-stddev'), ['10']),
  prompt('--prompt-input-tokens-stddev', alias('--isl-stddev'), ['10']),
  prompt('--isl-block-size', same()),
  prompt('--synthetic-input-tokens-block-size', alias('--isl-block-size'), ['64']),
  prompt('--prompt-input-tokens-block-size', alias('--isl-block-size'), ['64']),
  prompt('--seq-dist', same()),
  prompt('--sequence-distribution', alias('--seq-dist'), ['128,64:50;512,128:50']),
  prompt('--osl', same()),
  prompt('--output-tokens-mean', alias('--osl'), ['64']),
  prompt('--prompt-output-tokens-mean', alias('--osl'), ['64']),
  prompt('--osl-stddev', same()),
  prompt('--output-tokens-stddev', alias('--osl-stddev'), ['8']),
  prompt('--prompt-output-tokens-stddev', alias('--osl-stddev'), ['8']),
  prompt('--num-prefix-prompts', same()),
  prompt('--prefix-prompt-pool-size', alias('--num-prefix-prompts'), ['4']),
  prompt('--prompt-prefix-pool-size', alias('--num-prefix-prompts'), ['4']),
  prompt('--prefix-prompt-length', same()),
  prompt('--prompt-prefix-length', alias('--prefix-prompt-length'), ['100']),
  prompt('--shared-system-prompt-length', same()),
  prompt('--user-context-prompt-length', same()),
  prompt('--prompt-corpus', refused('tokenload synthesizes prompts from its one bundled corpus')),
  prompt('--cache-bust', refused(NOT_YET)),
  prompt(
    '--system-prompt',
    same(
      'chat, responses (`instructions`) and messages (`system`); prepended to a dataset’s own system message; not with --shared-system-prompt-length or a prefix pool',
    ),
  ),
  prompt('--system-prompt-file', same('as --system-prompt; the file is read once at start-up')),
  rankings('--rankings-passages-mean', refused(RANKINGS_SYNTHETIC)),
  rankings('--rankings-passages-stddev', refused(RANKINGS_SYNTHETIC)),
  rankings('--rankings-passages-prompt-token-mean', refused(RANKINGS_SYNTHETIC)),
  rankings('--rankings-passages-prompt-token-stddev', refused(RANKINGS_SYNTHETIC)),
  rankings('--rankings-query-prompt-token-mean', refused(RANKINGS_SYNTHETIC)),
  rankings('--rankings-query-prompt-token-stddev', refused(RANKINGS_SYNTHETIC)),
  synthesis('--synthesis-speedup-ratio', same()),
  synthesis(
    '--synthesis-prefix-len-multiplier',
    same("stretches a row's leading run of shared hash ids (one extra streamed read of the file finds them)"),
  ),
  synthesis(
    '--synthesis-prefix-root-multiplier',
    same(
      'each session goes to one copy, chosen from its id (AIPerf: drawn per row), so its turns stay in one',
    ),
  ),
  synthesis('--synthesis-prompt-len-multiplier', same('scales the part of a row past its shared prefix')),
  synthesis('--synthesis-output-len-multiplier', same()),
  synthesis('--synthesis-max-isl', same('dropped rows counted in `input_rows_skipped.over_max_isl`')),
  synthesis('--synthesis-max-osl', same('capped rows counted in `input_rows_skipped.max_osl_capped`')),
  load('--concurrency', same('a comma list runs a sweep')),
  load('--request-rate', same('a comma list runs a sweep')),
  load('--arrival-pattern', same('patterns: constant, poisson, gamma')),
  load('--request-rate-mode', alias('--arrival-pattern'), ['constant', '--request-rate', '5']),
  load('--arrival-smoothness', same()),
  load('--vllm-burstiness', alias('--arrival-smoothness'), [
    '2',
    '--request-rate',
    '5',
    '--arrival-pattern',
    'gamma',
  ]),
  load('--request-count', same()),
  load('--num-requests', alias('--request-count'), ['7']),
  load('--benchmark-duration', same()),
  load('--duration', alias('--benchmark-duration', 'the name AIPerf’s tutorials use (ramping.md)'), ['60']),
  load(
    '--benchmark-grace-period',
    same('a number of seconds (AIPerf’s `inf` is not taken: give a large number)'),
  ),
  load(
    '--prefill-concurrency',
    same(
      'a request holds its slot from its start to its first token (or its end, if it fails first); the wait for a slot is its prefill_wait, part of schedule_lag, not of TTFT; not with --workers > 1',
    ),
  ),
  load('--concurrency-ramp-duration', same('also ramps the session cap of a --request-rate')),
  load('--prefill-concurrency-ramp-duration', same()),
  load('--request-rate-ramp-duration', same()),
  load(
    '--request-rate-series',
    same(
      'also a bare JSON list of points; linear between points, the last qps held after the last point; without --request-count or --benchmark-duration the run ends at the last point; arrivals (--arrival-pattern) are warped onto the series',
    ),
  ),
  load(
    '--failed-request-threshold',
    same(
      'checked from the 20th answered profiling request (AIPerf: max(concurrency, 10)); client cancellations are not counted; the run drains, exports and exits 4 with run_status failed_request_threshold',
    ),
  ),
  load(
    '--user-centric-rate',
    same(
      'users start in a steady state (virtual history) and send a turn every --num-users / rate seconds; not with --shard-count',
    ),
  ),
  load('--num-users', same('a single value (AIPerf’s comma list, a sweep, is not taken)')),
  warmup('--warmup-request-count', same()),
  warmup('--num-warmup-requests', alias('--warmup-request-count'), ['3']),
  warmup('--warmup-duration', same()),
  warmup('--num-warmup-sessions', same('the warm-up starts this many sessions and waits for each to end')),
  warmup('--warmup-concurrency', same()),
  warmup('--warmup-request-rate', same()),
  warmup('--warmup-arrival-pattern', same()),
  warmup('--warmup-prefill-concurrency', same()),
  warmup('--warmup-grace-period', same()),
  warmup('--warmup-concurrency-ramp-duration', same()),
  warmup('--warmup-prefill-concurrency-ramp-duration', same()),
  warmup('--warmup-request-rate-ramp-duration', same()),
  cancellation('--request-cancellation-rate', same()),
  cancellation('--request-cancellation-delay', same()),
  output(
    '--artifact-dir',
    same('an explicit folder is used as it is; the default is `artifacts/<run name>`'),
  ),
  output('--output-artifact-dir', alias('--artifact-dir'), ['out-dir']),
  output('--output-dir', alias('--artifact-dir', 'the name AIPerf’s tutorials use (arrival-patterns.md)'), [
    'out-dir',
  ]),
  output(
    '--profile-export-prefix',
    refused(
      'tokenload always writes the default file names (profile_export.jsonl, profile_export_aiperf.json/.csv), which `tokenload report` and AIPerf’s plot look for; use --artifact-dir to keep runs apart',
    ),
  ),
  output(
    '--profile-export-file',
    refused(
      'tokenload always writes the default file names (profile_export.jsonl, profile_export_aiperf.json/.csv), which `tokenload report` and AIPerf’s plot look for; use --artifact-dir to keep runs apart',
    ),
  ),
  output(
    '--export-level',
    same(
      'summary (no profile_export.jsonl), records (the default) or raw (adds profile_export_raw.jsonl; its responses are the parsed content chunks, not SSE bytes)',
    ),
  ),
  output('--profile-export-level', alias('--export-level'), ['raw']),
  output(
    '--slice-duration',
    same(
      'windows start at the earliest request start; a record counts in the window its request started in; empty windows are left out',
    ),
  ),
  output(
    '--export-http-trace',
    refused(`${NOT_YET}: each record carries request_sent_ns, connection_reused and the connect time`),
  ),
  output('--show-trace-timing', refused(NOT_YET)),
  output('--export-outputs-json', refused(NOT_YET)),
  output(
    '--auto-plot',
    accepted(
      'tokenload writes report.html (every chart) after every run; `tokenload plot DIR` writes the PNGs',
    ),
  ),
  telemetry(
    '--gpu-telemetry',
    same(
      'DCGM exporters over HTTP (localhost:9400, :9401 and the URLs given), only when given; dashboard, pynvml, amdsmi and a metrics CSV are refused',
    ),
  ),
  telemetry(
    '--no-gpu-telemetry',
    same('off is the default: tokenload scrapes no DCGM exporter unless asked'),
  ),
  telemetry('--server-metrics', same('on by default: every --url server’s /metrics, plus the URLs given')),
  telemetry('--no-server-metrics', same()),
  telemetry(
    '--server-metrics-formats',
    same(
      'default json, csv and jsonl (AIPerf: json and csv); parquet is refused: the jsonl holds every scrape',
    ),
  ),
  telemetry('--network-latency-automatic', refused(NOT_YET)),
  telemetry('--network-latency-mean', refused(NOT_YET)),
  ui('--ui', same('modes: none, simple, dashboard (dashboard is the live line of simple)')),
  ui('--ui-type', alias('--ui'), ['none']),
  multiRun(
    '--num-profile-runs',
    same(
      'runs in profile_runs/run_NNNN/ (a sweep: trial_NNNN/<value>/), aggregate/ with Student’s t intervals',
    ),
  ),
  multiRun('--profile-run-cooldown-seconds', same()),
  multiRun('--parameter-sweep-mode', same('repeated (the default) or independent')),
  multiRun('--parameter-sweep-cooldown-seconds', same()),
  multiRun('--parameter-sweep-same-seed', same()),
  multiRun('--confidence-level', same()),
  multiRun('--set-consistent-seed', same()),
  multiRun('--no-set-consistent-seed', same()),
  multiRun('--profile-run-disable-warmup-after-first', same()),
  multiRun('--no-profile-run-disable-warmup-after-first', same()),
  service(
    '--workers-max',
    alias(
      '--workers',
      'client worker threads (tokenload’s default is 1, a single process; AIPerf sizes it from the CPUs, as tokenload’s auto does from the cores and the load)',
    ),
    ['2'],
  ),
  service(
    '--max-workers',
    alias(
      '--workers',
      'client worker threads (tokenload’s default is 1, a single process; AIPerf sizes it from the CPUs, as tokenload’s auto does from the cores and the load)',
    ),
    ['2'],
  ),
  service('--record-processors', refused('tokenload processes records as they complete, on the main thread')),
  service(
    '--record-processor-service-count',
    refused('tokenload processes records as they complete, on the main thread'),
  ),
  service('--log-level', ignored(ONE_LEVEL)),
  service('-v', accepted(ONE_LEVEL)),
  service('--verbose', accepted(ONE_LEVEL)),
  service('-vv', accepted(ONE_LEVEL)),
  service('--extra-verbose', accepted(ONE_LEVEL)),
  service(
    '--zmq-host',
    refused('tokenload runs in one process (worker threads talk over in-process channels)'),
  ),
  service(
    '--zmq-ipc-path',
    refused('tokenload runs in one process (worker threads talk over in-process channels)'),
  ),
  ...[
    '--image-width-mean',
    '--image-width-stddev',
    '--image-height-mean',
    '--image-height-stddev',
    '--image-batch-size',
    '--batch-size-image',
    '--image-format',
    '--audio-batch-size',
    '--batch-size-audio',
    '--audio-length-mean',
    '--audio-length-stddev',
    '--audio-format',
    '--audio-depths',
    '--audio-sample-rates',
    '--audio-num-channels',
    '--video-batch-size',
    '--batch-size-video',
    '--video-duration',
    '--video-fps',
    '--video-width',
    '--video-height',
    '--video-synth-type',
    '--video-format',
    '--video-codec',
    '--video-audio-sample-rate',
    '--video-audio-num-channels',
    '--video-audio-codec',
    '--video-audio-depth',
    '--download-video-content',
    '--request-content-type',
  ].map((flag) => multimodal(flag, refused(TEXT_ONLY))),
  ...['--auth-type', '--aws-region', '--aws-service', '--aws-profile'].map((flag) =>
    auth(flag, refused(NO_SIGV4)),
  ),
  ...[
    '--otel-url',
    '--mlflow-tracking-uri',
    '--mlflow-experiment',
    '--mlflow-parent-run-id',
    '--stream',
    '--gen-ai-provider',
  ].map((flag) => liveExport(flag, refused(NO_LIVE_EXPORT))),
  ...[
    '--accuracy-benchmark',
    '--accuracy-tasks',
    '--accuracy-n-shots',
    '--accuracy-enable-cot',
    '--accuracy-grader',
    '--accuracy-system-prompt',
    '--accuracy-verbose',
  ].map((flag) => accuracy(flag, refused(NO_ACCURACY))),
  ...[
    '--search-sla',
    '--ttft-sla-ms',
    '--itl-sla-ms',
    '--e2e-sla-ms',
    '--error-rate-sla',
    '--slo-attainment-fraction',
  ].map((flag) => search(flag, refused(IN_SEARCH))),
  search('--tpot-sla-ms', refused(`${IN_SEARCH}; AIPerf's --tpot-sla-ms is its --itl-sla-ms`)),
  search('--search-max-iterations', refused(`${IN_SEARCH}; there it is --search-max-probes`)),
  search('--search-recipe', refused(SEARCH_RECIPE)),
  ...[
    '--search-style',
    '--search-space',
    '--search-metric',
    '--search-direction',
    '--sla-replicates',
    '--sla-precision',
    '--sla-warmup-seconds',
  ].map((flag) => search(flag, refused(NO_SEARCH_STYLE))),
  service('--api-port', refused('tokenload serves no API while it runs: read the artifact files')),
  service('--api-host', refused('tokenload serves no API while it runs: read the artifact files')),
];

/** The row of AIPerf's `flag` (exactly as typed), or undefined. */
export function aiperfOption(flag: string): AiperfOption | undefined {
  return BY_FLAG.get(flag);
}

const BY_FLAG = new Map(AIPERF_OPTIONS.map((o) => [o.flag, o]));

/** The message of a refused AIPerf option (or an accepted one given another value). */
export function refusalMessage(option: AiperfOption, value?: string): string {
  const status = option.status;
  const why = status.kind === 'refused' || status.kind === 'accepted' ? status.why : '';
  const what = value === undefined ? option.flag : `${option.flag} ${value}`;
  const only =
    status.kind === 'accepted' && status.value !== undefined ? ` (only ${status.value} is taken)` : '';
  return `${what} is AIPerf's option; tokenload does not take it${only}: ${why}.`;
}
