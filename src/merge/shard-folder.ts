/**
 * One shard's artifact folder as `tokenload merge` reads it: its summary
 * (`profile_export_aiperf.json`: the `shard` section, `run_status`, `input_config`, `client_health`,
 * `warnings`, times and load) and whether it holds records (`profile_export.jsonl`). Every problem
 * is a {@link RunLoadError} naming the file and the field.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ENDPOINT_TYPES, type EndpointTypeName } from '../endpoint/registry.js';
import { RECORDS_FILE_NAME, SUMMARY_JSON_FILE_NAME } from '../export/index.js';
import { RunLoadError } from '../report/types.js';
import { describeIssue } from '../util/option-meta.js';

/** A shard's clock against the others (the `shard.clock` section a sharded run writes). */
const ClockSchema = z.object({
  offset_ms: z.number(),
  uncertainty_ms: z.number().min(0),
  basis: z.string(),
  reference: z.string(),
});

/**
 * The `shard` section a sharded run (`--shard-index`, `--shard-count`) writes into its summary; the
 * fields merge reads, the others are kept as they are.
 */
export const ShardSectionSchema = z
  .object({
    index: z.number().int().min(0),
    count: z.number().int().min(1),
    start_at: z.string().nullable(),
    start_at_ms: z.number().nullable(),
    session_hash: z.string(),
    first_send_skew_ms: z.number().nullable(),
    clock: ClockSchema.nullable(),
    sessions: z.number().int().min(0),
    requests: z.number().int().min(0),
    /** Absent in a shard written before run identities (merge refuses it: shard-set.ts). */
    run_identity: z
      .object({
        trace_sha256: z.string().nullable(),
        trace_bytes: z.number().int().min(0).nullable(),
        options_sha256: z.string(),
      })
      .optional(),
  })
  .refine((s) => s.index < s.count, { message: 'index must be below count', path: ['index'] });

/** A parsed `shard` section. */
export type ShardSection = z.infer<typeof ShardSectionSchema>;

const RunStatusSchema = z.object({
  status: z.string(),
  reason: z.string().nullable(),
  exit_code: z.number().int(),
});

const HealthSchema = z.object({ status: z.string(), verdict: z.string() });

/** The options of a shard's `input_config` that decide how its records are summarized; the rest is kept. */
const InputConfigSchema = z.looseObject({
  endpointType: z.enum(ENDPOINT_TYPES as [EndpointTypeName, ...EndpointTypeName[]]),
  streaming: z.boolean(),
  useServerTokenCount: z.boolean(),
  goodput: z.string().optional(),
  url: z.array(z.string()).min(1),
  models: z.array(z.string()).min(1),
  endpointPath: z.string().optional(),
});

/** What merge reads of a shard's summary; other keys are ignored. */
const ShardSummarySchema = z.object({
  start_time: z.iso.datetime(),
  end_time: z.iso.datetime(),
  was_cancelled: z.boolean(),
  run_status: RunStatusSchema,
  input_config: InputConfigSchema,
  warnings: z.array(z.string()),
  shard: ShardSectionSchema.optional(),
  client_health: HealthSchema.optional(),
  load: z
    .object({ strategy: z.string(), description: z.string(), warmup: z.unknown().optional() })
    .optional(),
  tokenizer: z.unknown().optional(),
  /** Every shard's view of the whole input file (the loader runs before sharding). */
  input_rows_skipped: z.looseObject({ unread_after_line: z.number().nullable().optional() }).optional(),
  /** The trace check, over the whole file in every shard. */
  trace_check: z.looseObject({ developer_role_rewritten: z.number().nullable().optional() }).optional(),
});

/** A shard's summary as merge uses it. */
export type ShardSummary = z.infer<typeof ShardSummarySchema>;

/** One shard's folder. */
export interface ShardFolder {
  /** The folder as given on the command line. */
  dir: string;
  /** Its `profile_export_aiperf.json`. */
  summaryFile: string;
  /** Its `profile_export.jsonl`; null when absent (a run that failed before its first request). */
  recordsFile: string | null;
  summary: ShardSummary;
  /**
   * Its `shard` section; null only for a run that failed before it wrote one (its index is then
   * unknown: the merge counts it as failed, and its index as missing).
   */
  shard: ShardSection | null;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function readJson(dir: string, file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `no ${SUMMARY_JSON_FILE_NAME} here` : `cannot read ${file} (${code})`;
    throw new RunLoadError(`${dir}: ${why}; is this a tokenload run folder?`, file);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new RunLoadError(`${file}: not valid JSON (${(err as Error).message})`, file);
  }
}

function fieldError(file: string, json: unknown, issue: z.core.$ZodIssue): RunLoadError {
  const path = issue.path.map(String);
  let value: unknown = json;
  for (const key of path) value = (value as Record<string, unknown> | undefined)?.[key];
  return new RunLoadError(`${file}: field ${path.join('.')}: ${describeIssue(issue, value)}`, file);
}

/**
 * The summary with tokenload's flat configuration under `input_config`, where merge reads it: a
 * summary of schema 1.5 keeps it as `tokenload_config` (its `input_config` is AIPerf's nested
 * layout); an older one has it as `input_config`.
 */
function withFlatConfig(json: unknown): unknown {
  if (json === null || typeof json !== 'object' || !('tokenload_config' in json)) return json;
  return { ...json, input_config: (json as { tokenload_config: unknown }).tokenload_config };
}

/**
 * Reads shard folder `dir`.
 * @throws {RunLoadError} when `dir` has no `profile_export_aiperf.json`, it is not JSON, or a field
 *   merge needs is missing or mistyped (the message names the file and the field); also when a run
 *   that recorded requests (its `run_status` is not `failed`) has no `profile_export.jsonl`.
 */
export async function readShardFolder(dir: string): Promise<ShardFolder> {
  const summaryFile = join(dir, SUMMARY_JSON_FILE_NAME);
  const json = await readJson(dir, summaryFile);
  const parsed = ShardSummarySchema.safeParse(withFlatConfig(json));
  if (!parsed.success) throw fieldError(summaryFile, json, parsed.error.issues[0] as z.core.$ZodIssue);
  const summary = parsed.data;
  const failed = summary.run_status.status === 'failed';
  if (summary.shard === undefined && !failed)
    throw new RunLoadError(
      `${summaryFile}: field shard: missing: this run was not a shard (tokenload profile --shard-index I --shard-count N writes it)`,
      summaryFile,
    );
  const records = join(dir, RECORDS_FILE_NAME);
  const hasRecords = await isFile(records);
  if (!hasRecords && !failed)
    throw new RunLoadError(`${dir}: no ${RECORDS_FILE_NAME} beside its ${SUMMARY_JSON_FILE_NAME}`, records);
  return {
    dir,
    summaryFile,
    recordsFile: hasRecords ? records : null,
    summary,
    shard: summary.shard ?? null,
  };
}
