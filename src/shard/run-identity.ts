/**
 * A shard's run identity (the summary's `shard.run_identity`): what `tokenload merge` compares so
 * that only shards of one run merge. Two digests, both SHA-256 in hex:
 * - `trace_sha256`: of the input file's size (its decimal digits and a newline), its first
 *   {@link TRACE_DIGEST_EDGE_BYTES} bytes and its last {@link TRACE_DIGEST_EDGE_BYTES} (the whole
 *   file when smaller than both): cheap for a trace of gigabytes, and any change of length, head or
 *   tail changes it (an edit in the middle of a large file of the same size does not). The path is
 *   not part of it: shards on different machines may mount the file elsewhere.
 * - `options_sha256`: of the run's configuration as its summary records it (`input_config`, secrets
 *   redacted) with every default applied ({@link resolvedOptions}: a default spelled out equals it
 *   left out), as JSON with sorted keys, without the options that do not change what is sent or to
 *   whom ({@link IDENTITY_EXCLUDED_OPTIONS}: the shard index, `--start-at` (compared on its own),
 *   outputs, the console, the client's own machinery, the input file's path).
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { inputConfigOf } from '../config/input-config.js';
import { planRun } from '../config/plan.js';
import type { ProfileConfig } from '../config/resolve.js';
import { profileConfig } from '../config/schema.js';

/** Bytes of the trace's head, and of its tail, in `trace_sha256`. */
export const TRACE_DIGEST_EDGE_BYTES = 64 * 1024;

/**
 * Configuration keys left out of `options_sha256`: they differ between the shards of one run, or
 * change neither the requests sent nor the server they go to.
 */
export const IDENTITY_EXCLUDED_OPTIONS: ReadonlySet<string> = new Set([
  'shardIndex',
  'startAtMs',
  'inputFile',
  'traceStreaming',
  'artifactDir',
  'exportLevel',
  'confidenceLevel',
  'sliceDurationSeconds',
  'steadyState',
  'simulator',
  'simulatorOptions',
  'timingPrecision',
  'clientWarmupMs',
  'prewarmConnections',
  'workers',
  'ui',
  'serverMetrics',
  'serverMetricsFormats',
  'serverMetricsIntervalMs',
  'gpuTelemetry',
  'gpuTelemetryIntervalMs',
  'waitForModelTimeoutSeconds',
  'waitForModelMode',
  'waitForModelIntervalSeconds',
  'commandLine',
]);

/** The summary's `shard.run_identity`. */
export interface RunIdentity {
  /** SHA-256 (hex) of the input file's size, first and last 64 KiB; null without an input file. */
  trace_sha256: string | null;
  /** The input file's size, bytes; null without an input file (or a folder). */
  trace_bytes: number | null;
  /** SHA-256 (hex) of the sorted-key JSON of {@link resolvedOptions}. */
  options_sha256: string;
}

/** JSON with object keys sorted at every level, so equal values give equal text. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/** `input_config` (a summary's flat configuration) without {@link IDENTITY_EXCLUDED_OPTIONS}. */
export function identityOptions(inputConfig: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(inputConfig).filter(([k]) => !IDENTITY_EXCLUDED_OPTIONS.has(k)));
}

/**
 * What a run does with `inputConfig` (a summary's `input_config`, or {@link inputConfigOf} of a
 * configuration), every default applied: its run plan (config/plan.ts, where the defaults an option
 * left out takes are resolved: `--open-loop-replay`, the dataset type's block size, the warm-up's
 * load from the profiling phase's, …) without {@link IDENTITY_EXCLUDED_OPTIONS} and the parts made of
 * them (the input file's path, the wait for the model), as plain JSON values. A configuration the
 * schema no longer accepts (written by another tokenload) is compared as it is written.
 */
export function resolvedOptions(inputConfig: Record<string, unknown>): Record<string, unknown> {
  let plan: Record<string, unknown>;
  try {
    // The simulator's options are left out anyway; without them its URL is just a --url.
    const { simulatorOptions: _sim, ...rest } = inputConfig;
    plan = {
      ...planRun(profileConfig({ ...rest, simulator: false } as Parameters<typeof profileConfig>[0])),
    };
  } catch {
    return JSON.parse(sortedJson(identityOptions(inputConfig))) as Record<string, unknown>;
  }
  const { waitForModel: _wait, ...out } = identityOptions(plan);
  const input = out.input as { kind: string; file?: string };
  if (input.kind === 'file') out.input = { ...input, file: undefined };
  return JSON.parse(sortedJson(out)) as Record<string, unknown>;
}

/** The size and head-and-tail digest of `file`; nulls for a folder or a file that cannot be read. */
function traceDigest(file: string): Pick<RunIdentity, 'trace_sha256' | 'trace_bytes'> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return { trace_sha256: null, trace_bytes: null };
  }
  try {
    const size = fstatSync(fd).size;
    if (!fstatSync(fd).isFile()) return { trace_sha256: null, trace_bytes: null };
    const hash = createHash('sha256').update(`${size}\n`);
    const edge = Math.min(size, TRACE_DIGEST_EDGE_BYTES);
    const buffer = Buffer.alloc(edge);
    hash.update(buffer.subarray(0, readSync(fd, buffer, 0, edge, 0)));
    if (size > edge) hash.update(buffer.subarray(0, readSync(fd, buffer, 0, edge, size - edge)));
    return { trace_sha256: hash.digest('hex'), trace_bytes: size };
  } catch {
    return { trace_sha256: null, trace_bytes: null };
  } finally {
    closeSync(fd);
  }
}

/** The run identity of a run whose configuration, as asked (the summary's `input_config`), is `asked`. */
export function runIdentityOf(asked: ProfileConfig): RunIdentity {
  const file = asked.inputFile;
  const options = resolvedOptions(inputConfigOf(asked));
  return {
    ...(file === undefined ? { trace_sha256: null, trace_bytes: null } : traceDigest(file)),
    options_sha256: createHash('sha256').update(sortedJson(options)).digest('hex'),
  };
}

/** Sorted-key JSON text of a value, `absent` for none. */
function text(v: unknown): string {
  return v === undefined ? 'absent' : sortedJson(v);
}

/**
 * The options (keys of `input_config`, minus {@link IDENTITY_EXCLUDED_OPTIONS}) that make `a` and
 * `b` do different things, each as `key a-value vs b-value`, sorted by key: an option written
 * differently counts only when `a` with `b`'s value of it (or without it) resolves to another run
 * ({@link resolvedOptions}), so `--open-loop-replay` given on one side and left to its default on the
 * other is no difference. Empty when the two resolve alike. When they do not and no one option
 * explains it, the resolved parts that differ are named instead (`load.pacing.openLoop`).
 */
export function optionDifferences(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const [ra, rb] = [resolvedOptions(a), resolvedOptions(b)];
  if (sortedJson(ra) === sortedJson(rb)) return [];
  const [x, y] = [identityOptions(a), identityOptions(b)];
  const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
  const resolvedA = sortedJson(ra);
  const named = keys.filter((k) => {
    if (text(x[k]) === text(y[k])) return false;
    const swapped: Record<string, unknown> = { ...a, [k]: y[k] };
    if (y[k] === undefined) delete swapped[k];
    return sortedJson(resolvedOptions(swapped)) !== resolvedA;
  });
  if (named.length > 0) return named.map((k) => `${k} ${text(x[k])} vs ${text(y[k])}`);
  return resolvedDifferences(ra, rb, '');
}

/** The dotted paths at which two resolved values differ, each as `path a-value vs b-value`. */
function resolvedDifferences(a: unknown, b: unknown, path: string): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(a) || !isObject(b)) return text(a) === text(b) ? [] : [`${path} ${text(a)} vs ${text(b)}`];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((k) => resolvedDifferences(a[k], b[k], path === '' ? k : `${path}.${k}`));
}
