/**
 * Detection of a file's dataset type when `--custom-dataset-type` is not given, by AIPerf's rules
 * (source: dataset/composer/custom.py `_infer_dataset_type` and each loader's `can_load`): the first
 * non-blank rows are read; a row whose `type` names a dataset type is that type; otherwise every
 * type whose row shape the row has is a candidate, and exactly one must remain over the rows read.
 * - `bailian_trace`: a `chat_id`.
 * - `multi_turn`: a `turns` array.
 * - `single_turn`: `text` or `texts` (a `random_pool` row looks the same; AIPerf also picks
 *   `single_turn`: give `--custom-dataset-type random_pool` for that).
 * - `mooncake_trace`: only Mooncake fields, with exactly one of `input_length`, `text_input`,
 *   `messages`, `payload`.
 * - `raw_payload`: a `messages` array, no `conversation_id` and no `data` array. A row
 *   `{"messages": [...]}` with nothing else fits Mooncake too and is refused as ambiguous, as in AIPerf.
 * - `inputs_json`: the whole file is one JSON document `{"data": [{"payloads": [...]}]}` (AIPerf's
 *   line-based detection cannot read a pretty-printed one; tokenload reads the document).
 * - a CSV whose header has the Azure (`TIMESTAMP`, `ContextTokens`, `GeneratedTokens`) or BurstGPT
 *   (`Timestamp`, `Request tokens`, `Response tokens`) columns.
 * - a folder: `raw_payload` when its first `*.jsonl` file starts with a request body, else
 *   `random_pool` when it holds `*.jsonl` files.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { AZURE_COLUMNS } from './azure.js';
import { BURSTGPT_COLUMNS } from './burstgpt.js';
import { looksLikeInputsJson } from './inputs-json.js';
import { MOONCAKE_INPUT_FIELDS } from './mooncake-row.js';
import { looksLikeRawPayload } from './raw-payload.js';
import { DATASET_TYPE_NAMES, type DatasetTypeName, isDatasetTypeName } from './registry.js';
import { DatasetError } from './types.js';

/** How many non-blank rows detection reads at most. */
export const DETECT_ROWS = 5;

/** Bytes read from the start of a file for detection. */
const DETECT_BYTES = 1 << 20;

/** A detected type and why: the file, the rows it was judged on. */
export interface DetectedType {
  type: DatasetTypeName;
  /** What decided it, for the log (e.g. `lines 1-3: a "turns" array`). */
  reason: string;
}

const MOONCAKE_FIELDS = new Set([
  'timestamp',
  'session_id',
  'input_length',
  'output_length',
  'text_input',
  'hash_ids',
  'delay',
  'messages',
  'payload',
  'extra',
  'tools',
  'message_mode',
  'context_mode',
  'type',
]);

type Row = Record<string, unknown>;
const TESTS: ReadonlyArray<[DatasetTypeName, string, (row: Row) => boolean]> = [
  ['bailian_trace', 'a "chat_id"', (r) => 'chat_id' in r],
  ['multi_turn', 'a "turns" array', (r) => Array.isArray(r.turns)],
  ['single_turn', 'a "text" or "texts"', (r) => ('text' in r || 'texts' in r) && !('turns' in r)],
  [
    'mooncake_trace',
    'Mooncake fields only, with one of input_length, text_input, messages, payload',
    (r) =>
      Object.keys(r).every((k) => MOONCAKE_FIELDS.has(k)) &&
      MOONCAKE_INPUT_FIELDS.filter((f) => r[f] !== undefined && r[f] !== null).length === 1,
  ],
  ['raw_payload', 'a request body (a "messages" array)', looksLikeRawPayload],
  ['inputs_json', 'one JSON document with data[].payloads', looksLikeInputsJson],
];

/** The whole lines among the first {@link DETECT_BYTES} bytes of `file` (a cut last line dropped). */
export function headLines(file: string): string[] {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(DETECT_BYTES);
    const n = readSync(fd, buffer, 0, DETECT_BYTES, 0);
    const lines = buffer
      .subarray(0, n)
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .split('\n');
    if (n === DETECT_BYTES && lines.length > 1) lines.pop();
    return lines;
  } finally {
    closeSync(fd);
  }
}

/** Refuses the run (a usage error, exit 2): the type cannot be told, so the user must name it. */
function refuse(file: string, why: string, line?: number): never {
  const at = line === undefined ? file : `${file}:${line}`;
  throw new ConfigError(
    `${at}: cannot tell the dataset type without --custom-dataset-type: ${why}; give --custom-dataset-type (one of ${DATASET_TYPE_NAMES.join(', ')}).`,
    '--custom-dataset-type',
  );
}

/** The CSV trace type whose columns `header` (a CSV header line) has; null for none. */
export function csvType(file: string, header: string): DetectedType | null {
  const columns = header.split(',').map((c) => c.trim().replace(/^"|"$/g, ''));
  const has = (need: readonly string[]) => need.every((c) => columns.includes(c));
  if (has(AZURE_COLUMNS))
    return { type: 'azure_trace', reason: `${file}: a CSV header with ${AZURE_COLUMNS.join(', ')}` };
  if (has(BURSTGPT_COLUMNS))
    return { type: 'burst_gpt_trace', reason: `${file}: a CSV header with ${BURSTGPT_COLUMNS.join(', ')}` };
  return null;
}

function wholeDocument(file: string): DetectedType | null {
  try {
    const doc: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return looksLikeInputsJson(doc)
      ? { type: 'inputs_json', reason: `${file}: one JSON document with data[].payloads` }
      : null;
  } catch {
    return null;
  }
}

/** The types one parsed row fits: its own `type` when that names a dataset type, else by shape. */
export function rowTypes(row: unknown): { types: DatasetTypeName[]; why: string[] } {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return { types: [], why: [] };
  const r = row as Row;
  if (typeof r.type === 'string' && isDatasetTypeName(r.type))
    return { types: [r.type], why: [`"type": "${r.type}"`] };
  const fit = TESTS.filter(([, , test]) => test(r));
  return { types: fit.map(([t]) => t), why: fit.map(([, why]) => why) };
}

function fromRows(file: string, lines: string[]): DetectedType {
  let candidates: DatasetTypeName[] | null = null;
  let why: string[] = [];
  let first = 0;
  let last = 0;
  for (let i = 0, seen = 0; i < lines.length && seen < DETECT_ROWS; i += 1) {
    const text = (lines[i] ?? '').trim();
    if (text === '') continue;
    seen += 1;
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch {
      if (seen === 1)
        return (
          csvType(file, text) ??
          wholeDocument(file) ??
          refuse(file, 'the first line is neither JSON nor a known CSV header', i + 1)
        );
      refuse(file, 'the line is not valid JSON', i + 1);
    }
    const fit = rowTypes(row);
    const kept: DatasetTypeName[] =
      candidates === null ? fit.types : candidates.filter((t) => fit.types.includes(t));
    if (kept.length === 0) {
      const was =
        candidates === null
          ? 'no dataset type has this row shape'
          : `earlier rows look like ${candidates.join(' or ')}, this one does not`;
      refuse(file, was, i + 1);
    }
    if (first === 0) first = i + 1;
    last = i + 1;
    candidates = kept;
    why = fit.why;
  }
  if (candidates === null) return wholeDocument(file) ?? refuse(file, 'the file has no rows');
  if (candidates.length > 1) refuse(file, `the rows fit ${candidates.join(' and ')} alike`, first);
  const rows = first === last ? `line ${first}` : `lines ${first}-${last}`;
  return { type: candidates[0] as DatasetTypeName, reason: `${file} ${rows}: ${why.join(', ')}` };
}

function fromFolder(folder: string): DetectedType {
  const files = readdirSync(folder)
    .filter((n) => n.endsWith('.jsonl'))
    .sort();
  if (files.length === 0) refuse(folder, 'a folder without *.jsonl files');
  const first = join(folder, files[0] as string);
  const line = headLines(first).find((l) => l.trim() !== '');
  let row: unknown = null;
  try {
    row = line === undefined ? null : JSON.parse(line);
  } catch {
    refuse(first, 'the first line is not valid JSON', 1);
  }
  if (looksLikeRawPayload(row))
    return {
      type: 'raw_payload',
      reason: `${folder}: a folder whose first *.jsonl file starts with a request body`,
    };
  return { type: 'random_pool', reason: `${folder}: a folder of *.jsonl files (a pool)` };
}

/**
 * The dataset type of `path` (a file or a folder) by the rules of the module comment.
 * @throws {ConfigError} (exit 2) naming the file, the line and why when no type or more than one fits.
 * @throws {DatasetError} when the path cannot be read.
 */
export function detectDatasetType(path: string): DetectedType {
  let folder: boolean;
  try {
    folder = statSync(path).isDirectory();
  } catch (err) {
    throw new DatasetError(`${path}: cannot read the input file (${(err as Error).message})`, path);
  }
  if (folder) return fromFolder(path);
  return fromRows(path, headLines(path));
}
