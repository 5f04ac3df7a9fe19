/**
 * Trace and dataset options: `--help`'s "Input:" group.
 * Each field carries its AIPerf flag, unit, default and help text ({@link option}); field names
 * follow the flags with units in the names.
 */
import { z } from 'zod';
import { DATASET_TYPE_NAMES } from '../dataset/registry.js';
import { SAMPLING_STRATEGIES } from '../dataset/sampling.js';
import { SyntheticOptionsSchema } from '../dataset/synthetic-options.js';
import { option } from '../util/option-meta.js';
import { int } from './field-kinds.js';

/** Context modes a user may force with `--conversation-context-mode`. */
export const CONTEXT_MODES = [
  'deltas_without_responses',
  'deltas_with_responses',
  'message_array_with_responses',
] as const;

/** Trace and dataset options. */
export const inputFields = {
  /** `--input-file`: trace or dataset file; absent for a synthetic dataset. */
  inputFile: option(z.string().min(1).optional(), {
    flag: 'input-file',
    unit: 'path',
    help: 'trace or dataset file',
    defaultText: 'synthetic data',
  }),
  /** `--custom-dataset-type`: format of `--input-file` (required with it). */
  customDatasetType: option(z.enum(DATASET_TYPE_NAMES).optional(), {
    flag: 'custom-dataset-type',
    unit: 'type',
    help: 'format of --input-file',
  }),
  /** `--dataset-sampling-strategy`: order of conversations. */
  datasetSamplingStrategy: option(z.enum(SAMPLING_STRATEGIES).optional(), {
    flag: 'dataset-sampling-strategy',
    unit: 's',
    help: 'order of conversations',
    defaultText: 'per dataset type',
  }),
  /** `--conversation-context-mode`: overrides the dataset type's context mode. */
  contextModeOverride: option(z.enum(CONTEXT_MODES).optional(), {
    flag: 'conversation-context-mode',
    unit: 'mode',
    help: 'override how history is sent',
    defaultText: 'per dataset type',
  }),
  /** `--skip-bad-lines`: count and skip malformed trace lines instead of failing. */
  skipBadLines: option(z.boolean().default(false), {
    flag: 'skip-bad-lines',
    help: 'skip (and count) malformed trace lines instead of failing',
  }),
  /**
   * `--trace-streaming`: a fixed-schedule replay of a streamable trace (Bailian, Mooncake) reads
   * the file while it replays. Off: the whole file is read and validated first (AIPerf's way).
   */
  traceStreaming: option(z.boolean().default(true), {
    flag: 'trace-streaming',
    help: 'fixed schedule: read the trace while it replays; --no-trace-streaming reads and validates the whole trace before the first request',
  }),
  /**
   * `--trace-session-sample-ratio`: replay a share of an input file's sessions, each kept or dropped
   * whole by a hash of its id (its Bailian tree's) and `--random-seed` (dataset/session-sample.ts).
   */
  traceSessionSampleRatio: option(z.number().gt(0).max(1).optional(), {
    flag: 'trace-session-sample-ratio',
    unit: 'ratio',
    help: "keep this share (0 < R <= 1) of the input file's sessions, each whole (a Bailian tree as one), chosen by a hash of its id and --random-seed",
    defaultText: '1 (every session)',
  }),
  /**
   * `--bailian-linear-sessions`: a `bailian_trace` replayed on a fixed schedule forms one linear
   * session per root, siblings sent one after the other (AIPerf's way), instead of trees whose sibling
   * follow-ups each wait for their parent only (dataset/bailian-links.ts). Without a fixed schedule
   * sessions are linear either way. Refused without a `bailian_trace` input file (rules.ts).
   */
  bailianLinearSessions: option(z.boolean().default(false), {
    flag: 'bailian-linear-sessions',
    help: 'bailian_trace on a fixed schedule (needs --input-file with --custom-dataset-type bailian_trace): one linear session per root, sibling follow-ups (rows naming the same parent_chat_id) sent one after the other as AIPerf does, instead of each at its own time once its parent completed',
  }),
  /** `--isl-block-size`: tokens per hash id (default from the dataset type: 16 Bailian, 512 Mooncake). */
  islBlockSize: option(int(1).optional(), {
    flag: 'isl-block-size',
    unit: 'tokens',
    help: 'tokens per hash_id block',
    defaultText: '16 Bailian and synthetic, 512 Mooncake',
  }),
  /**
   * `--system-prompt`: the exact text of one system message put on every conversation, whatever the
   * dataset (request/system-prompt.ts); its tokens add to the prompt's.
   */
  systemPrompt: option(z.string().min(1).optional(), {
    flag: 'system-prompt',
    unit: 'text',
    help: 'exact text of a system message on every conversation (prepended to a dataset’s own system message, separated by a blank line)',
  }),
  /** `--system-prompt-file`: as `--system-prompt`, the text read from this file once at start-up. */
  systemPromptFile: option(z.string().min(1).optional(), {
    flag: 'system-prompt-file',
    unit: 'path',
    help: 'as --system-prompt, the text read from this file (once, at start-up)',
  }),
  /**
   * `--trace-check`: check a trace before replaying it (analyze/trace-check.ts) and warn, with counts,
   * about what would make the replay measure something else; never stops the run.
   */
  traceCheck: option(z.boolean().default(true), {
    flag: 'trace-check',
    help: 'warn (with counts) before the first request about trace rows a replay would distort: whole-second bursts, 0-token rows, rows over --max-context-length, a quiet start or long gap, repeated ids, developer messages, uneven shards (a streamed trace is read once more for it); --no-trace-check skips it',
  }),
  /**
   * `--max-context-length`: the served model's context, for the trace check's rows over it; default
   * the run tokenizer's `model_max_length` (tokenizer_config.json), when it has a usable one.
   */
  maxContextLength: option(int(1).optional(), {
    flag: 'max-context-length',
    unit: 'tokens',
    help: 'the served model’s context length: the trace check counts rows whose input plus output length exceed it',
    defaultText: 'the tokenizer’s model_max_length, else unknown (that check is skipped)',
  }),
  /**
   * `--developer-role-as-system`: messages with the `developer` role (which vLLM answers with 400)
   * are sent with the `system` role; counted in the summary's `trace_check.developer_role_rewritten`.
   */
  developerRoleAsSystem: option(z.boolean().default(false), {
    flag: 'developer-role-as-system',
    help: 'send dataset messages whose role is "developer" (refused by vLLM with HTTP 400) as "system" messages; counted on the console and in the summary',
  }),
  /** Synthetic dataset options (`--isl`, `--osl`, …), used when there is no input file. */
  synthetic: SyntheticOptionsSchema.optional(),
};
