/**
 * The declared `--custom-dataset-type` checked against what the file's first row looks like, before
 * a row is loaded. The trace formats share fields (`timestamp`, `input_length`, `hash_ids`), so a
 * file read under the wrong one can load and replay wrong in silence: a Bailian trace read as
 * `mooncake_trace` has its timestamps (seconds) taken as milliseconds, a replay 1,000× too fast, and
 * its `parent_chat_id` links dropped. The first non-blank row is judged by the shapes of detect.ts:
 * - a `chat_id` (with `parent_chat_id`, `turn`): `bailian_trace`;
 * - Mooncake fields only (`hash_ids`, a ms `timestamp`, one input mode), none of Bailian's: `mooncake_trace`;
 * - a CSV header with the Azure or BurstGPT columns: `azure_trace` / `burst_gpt_trace`.
 *
 * The run is refused when the row fits a trace format (one of those four) and not the declared type.
 * A row that fits no shape, or the declared one among others, is left to the loader, which names
 * the file, line and field of any problem. Folders are not checked.
 */
import { statSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { csvType, headLines, rowTypes } from './detect.js';
import type { DatasetTypeName } from './registry.js';

/** The dataset types whose files are checked against the declared type: the trace formats. */
export const TRACE_FORMATS: ReadonlySet<DatasetTypeName> = new Set<DatasetTypeName>([
  'bailian_trace',
  'mooncake_trace',
  'azure_trace',
  'burst_gpt_trace',
]);

/** Why a mix-up between two trace formats is wrong, when that pair has a known consequence. */
function consequence(declared: DatasetTypeName, looks: DatasetTypeName): string {
  if (declared === 'mooncake_trace' && looks === 'bailian_trace')
    return 'read as mooncake_trace its timestamps (seconds) would be taken as milliseconds, a replay 1,000× too fast, and its parent_chat_id links dropped';
  if (declared === 'bailian_trace' && looks === 'mooncake_trace')
    return 'read as bailian_trace its timestamps (milliseconds) would be taken as seconds, a replay 1,000× too slow';
  return `the ${declared} loader would read its fields under another meaning`;
}

/** The first non-blank line of `file` and its 1-based number; null for an empty file. */
function firstLine(file: string): { text: string; line: number } | null {
  const lines = headLines(file);
  for (let i = 0; i < lines.length; i++) {
    const text = (lines[i] ?? '').trim();
    if (text !== '') return { text, line: i + 1 };
  }
  return null;
}

/** The trace format the first row looks like and the fields seen; null when it fits `declared` or no trace format. */
function lookOf(
  file: string,
  text: string,
  declared: DatasetTypeName,
): { type: DatasetTypeName; fields: string } | null {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch {
    const csv = csvType(file, text);
    if (csv === null || csv.type === declared) return null;
    return { type: csv.type, fields: `the CSV columns ${text}` };
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return null;
  const { types } = rowTypes(row);
  const trace = types.filter((t) => TRACE_FORMATS.has(t));
  if (types.includes(declared) || trace.length !== 1) return null;
  return { type: trace[0] as DatasetTypeName, fields: `the fields ${Object.keys(row).join(', ')}` };
}

/**
 * Refuses a file whose first row is of another trace format than `declared` (the rules of the
 * module comment). Reads at most the file's first MiB; a folder or an unreadable file passes (the
 * loader reports it).
 * @throws {ConfigError} (exit 2, option `--custom-dataset-type`) naming the file and line, the fields
 *   seen, why the replay would be wrong, and the `--custom-dataset-type` to give.
 */
export function checkDeclaredFormat(file: string, declared: DatasetTypeName): void {
  try {
    if (!statSync(file).isFile()) return;
  } catch {
    return;
  }
  const first = firstLine(file);
  if (first === null) return;
  const look = lookOf(file, first.text, declared);
  if (look === null) return;
  throw new ConfigError(
    `${file}:${first.line}: --custom-dataset-type ${declared} does not fit this file: its first row has ${look.fields}, ` +
      `which is ${look.type}; ${consequence(declared, look.type)}. Give --custom-dataset-type ${look.type}.`,
    '--custom-dataset-type',
  );
}
