/**
 * The option table of `tokenload profile`, grouped as AIPerf groups them. Flag names and meanings
 * follow `aiperf profile`; every value parser rejects bad input before anything is sent.
 */
import { type Command, Option } from 'commander';
import { DATASET_LOADERS } from '../dataset/registry.js';
import { SAMPLING_STRATEGIES } from '../dataset/sampling.js';
import { ENDPOINTS } from '../endpoint/registry.js';
import { ARRIVAL_PATTERNS } from '../timing/arrivals.js';
import {
  collectExtraInputs,
  collectHeaders,
  collectSimulatorOption,
  integerAtLeast,
  numberIn,
  parseModels,
  parseUrl,
  positiveNumber,
} from './parsers.js';

/** Context modes a user may force with `--conversation-context-mode`. */
export const CONTEXT_MODES = [
  'deltas_without_responses',
  'deltas_with_responses',
  'message_array_with_responses',
] as const;

/** A comma-separated list of numbers (sweeps): `1,4,16`. */
function numberList(parse: (v: string) => number): (v: string) => number[] {
  return (v) => v.split(',').map((x) => parse(x.trim()));
}

/** Endpoint, input and tokenizer options. */
function endpointOptions(cmd: Command): Command {
  return cmd
    .requiredOption(
      '-m, --model <names>',
      'model name(s), comma-separated; requests round-robin',
      parseModels,
    )
    .option('-u, --url <url>', 'server URL; http:// implied', parseUrl, 'http://localhost:8000')
    .addOption(
      new Option('--endpoint-type <type>', 'endpoint API').choices(Object.keys(ENDPOINTS)).default('chat'),
    )
    .option('--endpoint <path>', 'URL path override (default per endpoint type)')
    .option('--streaming', 'stream responses (needed for TTFT, ITL, ICL)', false)
    .option('--request-timeout-seconds <s>', 'per-request time limit', positiveNumber, 21600)
    .option(
      '--extra-inputs <kv>',
      'body field key:value or a JSON object; repeatable',
      collectExtraInputs,
      {},
    )
    .option('-H, --header <header>', 'extra HTTP header "Name:Value"; repeatable', collectHeaders, {})
    .option('--api-key <key>', 'sent as Authorization: Bearer <key>')
    .option('--use-legacy-max-tokens', 'send max_tokens instead of max_completion_tokens', false)
    .option('--use-server-token-count', 'take ISL/OSL from the server usage object', false)
    .option('--per-chunk-usage', 'ask for per-chunk usage (continuous_usage_stats)', false)
    .option(
      '--tokenizer <path>',
      'HF model folder or tokenizer.json; builtin:qwen3 is the bundled Qwen3',
      'builtin:qwen3',
    )
    .option(
      '--random-seed <n>',
      'seed for data and arrivals (random and recorded if unset)',
      integerAtLeast(0),
    );
}

/** Dataset options: trace files, custom types and synthetic data. */
function datasetOptions(cmd: Command): Command {
  return cmd
    .option('--input-file <path>', 'trace or dataset file (omit for synthetic data)')
    .addOption(
      new Option('--custom-dataset-type <type>', 'format of --input-file').choices(
        Object.keys(DATASET_LOADERS),
      ),
    )
    .addOption(
      new Option('--dataset-sampling-strategy <s>', 'order of conversations').choices([
        ...SAMPLING_STRATEGIES,
      ]),
    )
    .addOption(
      new Option('--conversation-context-mode <mode>', 'override how history is sent').choices([
        ...CONTEXT_MODES,
      ]),
    )
    .option('--skip-bad-lines', 'skip (and count) malformed trace lines instead of failing', false)
    .option(
      '--no-trace-streaming',
      'fixed schedule: read and validate the whole trace before the first request, instead of reading it while it replays',
    )
    .option(
      '--isl-block-size <tokens>',
      'tokens per hash_id block (default: 16 Bailian, 512 Mooncake)',
      integerAtLeast(1),
    )
    .option('--isl <tokens>', 'synthetic: mean input length (550)', integerAtLeast(1))
    .option('--isl-stddev <tokens>', 'synthetic: input length stddev (0)', numberIn(0))
    .option('--osl <tokens>', 'synthetic: mean output length (unset: no max tokens)', integerAtLeast(1))
    .option('--osl-stddev <tokens>', 'synthetic: output length stddev (0)', numberIn(0))
    .option('--seq-dist <spec>', 'synthetic: "ISL,OSL:pct;ISL|sd,OSL|sd:pct" mixture')
    .option('--num-dataset-entries <n>', 'synthetic: conversations to generate (100)', integerAtLeast(1))
    .option('--num-prefix-prompts <n>', 'synthetic: shared prefix pool size', integerAtLeast(0))
    .option('--prefix-prompt-length <tokens>', 'synthetic: tokens per pooled prefix', integerAtLeast(0))
    .option(
      '--shared-system-prompt-length <tokens>',
      'synthetic: prefix shared by all sessions',
      integerAtLeast(0),
    )
    .option('--user-context-prompt-length <tokens>', 'synthetic: per-session prefix', integerAtLeast(0))
    .option('--session-turns-mean <n>', 'synthetic: turns per session (1)', numberIn(1))
    .option('--session-turns-stddev <n>', 'synthetic: turns stddev (0)', numberIn(0))
    .option('--session-turn-delay-mean <ms>', 'synthetic: delay after the previous turn (0)', numberIn(0))
    .option('--session-turn-delay-stddev <ms>', 'synthetic: delay stddev (0)', numberIn(0))
    .option('--session-turn-delay-ratio <x>', 'synthetic: delay multiplier (1)', numberIn(0));
}

/** Fixed-schedule and trace-synthesis options. */
function scheduleOptions(cmd: Command): Command {
  return cmd
    .option('--fixed-schedule', 'replay on the trace timestamps (implied for timestamped traces)')
    .option('--no-fixed-schedule', 'ignore trace timestamps; use --concurrency or --request-rate')
    .option('--fixed-schedule-auto-offset', 'start the schedule at the first timestamp', true)
    .option('--no-fixed-schedule-auto-offset', 'keep absolute timestamps: idle until the first one is due')
    .option(
      '--fixed-schedule-start-offset <ms>',
      'drop rows before this trace time (ms, inclusive)',
      numberIn(0),
    )
    .option(
      '--fixed-schedule-end-offset <ms>',
      'drop rows after this trace time (ms, inclusive)',
      numberIn(0),
    )
    .option('--synthesis-speedup-ratio <x>', 'divide trace timestamps by x', positiveNumber, 1);
}

/** Load generator, stop condition, warmup and cancellation options. */
function loadOptions(cmd: Command): Command {
  return cmd
    .option(
      '--concurrency <n[,n…]>',
      'concurrent sessions; a list runs a sweep',
      numberList(integerAtLeast(1)),
    )
    .option(
      '--request-rate <r[,r…]>',
      'requests/s (open loop); a list runs a sweep',
      numberList(positiveNumber),
    )
    .addOption(
      new Option('--arrival-pattern <p>', 'inter-arrival distribution').choices([...ARRIVAL_PATTERNS]),
    )
    .option(
      '--arrival-smoothness <k>',
      'gamma shape (1 = Poisson; needs --arrival-pattern gamma)',
      positiveNumber,
    )
    .option('--request-count <n>', 'stop after this many requests', integerAtLeast(1))
    .option('--benchmark-duration <s>', 'stop issuing after this many seconds', positiveNumber)
    .option(
      '--benchmark-grace-period <s>',
      'wait this long for in-flight requests at a stop (s)',
      numberIn(0),
      30,
    )
    .option('--concurrency-ramp-duration <s>', 'open the concurrency slots over this time', positiveNumber)
    .option('--request-rate-ramp-duration <s>', 'raise the rate linearly over this time', positiveNumber)
    .option(
      '--warmup-request-count <n>',
      'warmup requests before profiling (not in the metrics)',
      integerAtLeast(1),
    )
    .option('--warmup-duration <s>', 'warmup time before profiling', positiveNumber)
    .option('--request-cancellation-rate <pct>', 'percent of requests the client cancels', numberIn(0, 100))
    .option('--request-cancellation-delay <s>', 'cancel this long after sending', numberIn(0), 0)
    .option('--goodput <slos>', 'SLOs, e.g. "time_to_first_token:300 inter_token_latency:20" (ms)');
}

/** Output, simulator and client options. */
function outputOptions(cmd: Command): Command {
  return cmd
    .option('--artifact-dir <dir>', 'output folder (default: artifacts/<run name>)')
    .option('--simulator', 'start the built-in simulator and profile it instead of --url', false)
    .option(
      '--simulator-option <name=value>',
      'built-in simulator parameter (see `tokenload simulate --help`, camelCase or kebab-case); repeatable',
      collectSimulatorOption,
      {},
    )
    .addOption(
      new Option(
        '--timing-precision <mode>',
        'timer: a helper thread wakes the loop 0.2 ms early, the last 0.2 ms is polled; spin: poll the last 1.5 ms before every send (costs a busy core)',
      )
        .choices(['timer', 'spin'])
        .default('timer'),
    )
    .option(
      '--client-warmup-ms <ms>',
      'before the run, exercise this client against an in-process simulator for this long, so the first requests are not sent and read by cold code; nothing reaches --url (0 = off)',
      integerAtLeast(0),
      500,
    )
    .option(
      '--workers <n>',
      'client worker threads, each with its own connection pool (1 = single-process, the default)',
      integerAtLeast(1),
    )
    .addOption(
      new Option('--ui <mode>', 'progress output (dashboard = the live bar, as simple)')
        .choices(['none', 'simple', 'dashboard'])
        .default('simple'),
    )
    .option('-f, --config <file>', 'YAML or JSON file of flag values (command-line flags win)');
}

/** Adds every `profile` option to `cmd`. */
export function defineProfileOptions(cmd: Command): Command {
  return outputOptions(loadOptions(scheduleOptions(datasetOptions(endpointOptions(cmd)))));
}
