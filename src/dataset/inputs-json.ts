/**
 * `inputs_json` loader: replays an `inputs.json` (the file AIPerf and tokenload write beside a run's
 * artifacts: `{"data": [{"session_id", "payloads": [body, …]}]}`) verbatim. Source: AIPerf docs
 * tutorials/inputs-json-replay.md. Each entry is one session with its id kept; each payload is one
 * turn, sent as written (model, `stream`, `max_tokens` and every other field untouched), turns in
 * order. The file is one JSON document (usually pretty-printed over many lines), read whole.
 */
import { readFile } from 'node:fs/promises';
import { payloadConversation, payloadTurn } from './payload-turns.js';
import { TEXT_DATASET_BLOCK_SIZE } from './single-turn.js';
import { type Conversation, type Dataset, DatasetError, type DatasetLoader } from './types.js';
import { describeValue } from './validate.js';

/**
 * Whether a parsed JSON value has the `inputs.json` layout: an object whose `data` is a non-empty
 * array and whose first entry has a `payloads` array (AIPerf's detection rule).
 */
export function looksLikeInputsJson(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const data = (value as Record<string, unknown>).data;
  if (!Array.isArray(data) || data.length === 0) return false;
  const first: unknown = data[0];
  return (
    typeof first === 'object' && first !== null && Array.isArray((first as Record<string, unknown>).payloads)
  );
}

async function readDocument(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new DatasetError(`${file}: cannot read the inputs file (${(err as Error).message})`, file);
  }
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    throw new DatasetError(`${file}: not one JSON document (${(err as Error).message})`, file, 1);
  }
}

function entryError(file: string, where: string, expected: string, got: unknown): DatasetError {
  return new DatasetError(
    `${file}: ${where}: expected ${expected}, got ${describeValue(got)}`,
    file,
    undefined,
    where,
  );
}

function sessionOf(file: string, entry: unknown, i: number): Conversation {
  const where = `data[${i}]`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    throw entryError(file, where, 'an object {session_id, payloads}', entry);
  const { session_id: id, payloads } = entry as Record<string, unknown>;
  if (typeof id !== 'string' && !Number.isSafeInteger(id))
    throw entryError(file, `${where}.session_id`, 'a string', id);
  if (!Array.isArray(payloads) || payloads.length === 0)
    throw entryError(file, `${where}.payloads`, 'a non-empty array of request bodies', payloads);
  const at = { file, line: 1 };
  const turns = payloads.map((p: unknown, j) => payloadTurn(p, j, at, `${where}.payloads[${j}]`));
  return payloadConversation(String(id), turns);
}

/**
 * Loads an `inputs.json` file: one conversation per `data` entry (its `session_id` kept), one
 * verbatim turn per payload. Offsets and synthesis options do not apply (no timestamps).
 * @throws {DatasetError} for an unreadable file, a file that is not one JSON document, an entry
 *   without a string `session_id` or a non-empty `payloads` array, a payload that is not an object,
 *   a repeated `session_id`, or no entry at all.
 */
export async function loadInputsJson(file: string): Promise<Dataset> {
  const doc = await readDocument(file);
  const data = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>).data : undefined;
  if (!Array.isArray(data) || data.length === 0)
    throw entryError(file, 'data', 'a non-empty array of sessions {session_id, payloads}', data);
  const conversations = data.map((entry: unknown, i) => sessionOf(file, entry, i));
  const seen = new Set<string>();
  for (const [i, c] of conversations.entries()) {
    if (seen.has(c.id)) throw entryError(file, `data[${i}].session_id`, 'a session id not used before', c.id);
    seen.add(c.id);
  }
  return {
    conversations,
    turnCount: conversations.reduce((n, c) => n + c.turns.length, 0),
    blockSize: TEXT_DATASET_BLOCK_SIZE,
    skipped: { beforeStartOffset: 0, afterEndOffset: 0, badLines: 0 },
    file,
  };
}

/** The `inputs_json` dataset type (verbatim replay of an inputs.json; no timestamps). */
export const inputsJsonLoader: DatasetLoader = {
  name: 'inputs_json',
  defaultBlockSize: TEXT_DATASET_BLOCK_SIZE,
  timestamped: false,
  load: (file) => loadInputsJson(file),
};
