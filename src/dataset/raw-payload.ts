/**
 * `raw_payload` loader: request bodies replayed verbatim (AIPerf docs tutorials/raw-payload-replay.md).
 * `--input-file` is either
 * - a JSONL file: each non-blank line is one body and one single-turn conversation
 *   (`raw_payload-<line>`), or
 * - a folder: each `*.jsonl` file in it (sorted by name; other files ignored) is one conversation
 *   named by its file name without `.jsonl`, its non-blank lines the turns in order.
 * Bodies are sent as written: model, `stream`, `max_tokens` and every other field untouched.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { readJsonl } from './jsonl-reader.js';
import { payloadConversation, payloadTurn } from './payload-turns.js';
import { TEXT_DATASET_BLOCK_SIZE } from './single-turn.js';
import {
  type Conversation,
  type Dataset,
  DatasetError,
  type DatasetLoader,
  type LoadOptions,
  type SkipCounts,
  type Turn,
} from './types.js';

/** Prefix of the conversation id of a body in a JSONL file: `raw_payload-<line>`. */
export const RAW_PAYLOAD_SESSION_PREFIX = 'raw_payload-';

/**
 * Whether one parsed line looks like a request body by AIPerf's detection rule: an object with a
 * `messages` array, no `conversation_id`, and no `data` array.
 */
export function looksLikeRawPayload(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const row = value as Record<string, unknown>;
  return Array.isArray(row.messages) && !('conversation_id' in row) && !Array.isArray(row.data);
}

/** Whether `path` is a folder (false when it does not exist). */
export async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** The `*.jsonl` files of a folder, sorted by name, as paths. */
export async function jsonlFilesIn(folder: string): Promise<string[]> {
  const names = (await readdir(folder, { withFileTypes: true }))
    .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
    .map((e) => e.name)
    .sort();
  return names.map((n) => join(folder, n));
}

async function bodiesOf(file: string, skipped: SkipCounts, skipBad: boolean): Promise<Turn[]> {
  const turns: Turn[] = [];
  const onBadJson = skipBad
    ? () => {
        skipped.badLines += 1;
      }
    : undefined;
  for await (const { line, value } of readJsonl(file, onBadJson === undefined ? {} : { onBadJson })) {
    turns.push(payloadTurn(value, turns.length, { file, line }, 'line'));
  }
  return turns;
}

async function fromFile(file: string, skipped: SkipCounts, skipBad: boolean): Promise<Conversation[]> {
  const turns = await bodiesOf(file, skipped, skipBad);
  return turns.map((t) => {
    t.index = 0;
    return payloadConversation(`${RAW_PAYLOAD_SESSION_PREFIX}${t.source.line}`, [t]);
  });
}

async function fromFolder(folder: string, skipped: SkipCounts, skipBad: boolean): Promise<Conversation[]> {
  const files = await jsonlFilesIn(folder);
  if (files.length === 0)
    throw new DatasetError(`${folder}: the folder holds no *.jsonl file (one per conversation)`, folder);
  const conversations: Conversation[] = [];
  for (const file of files) {
    const turns = await bodiesOf(file, skipped, skipBad);
    if (turns.length > 0) conversations.push(payloadConversation(basename(file, '.jsonl'), turns));
  }
  return conversations;
}

/**
 * Loads request bodies from a JSONL file or a folder of them (see the module comment). Offsets and
 * synthesis options do not apply (no timestamps).
 * @throws {DatasetError} for a missing file, a line that is not JSON (unless skipped), a body that
 *   is not an object, a folder without `*.jsonl` files, or no body at all.
 */
export async function loadRawPayload(path: string, options: LoadOptions = {}): Promise<Dataset> {
  const skipped: SkipCounts = { beforeStartOffset: 0, afterEndOffset: 0, badLines: 0 };
  const skipBad = options.skipBadLines === true;
  const conversations = (await isFolder(path))
    ? await fromFolder(path, skipped, skipBad)
    : await fromFile(path, skipped, skipBad);
  const turnCount = conversations.reduce((n, c) => n + c.turns.length, 0);
  if (turnCount === 0) throw new DatasetError(`${path}: no request body found (every line is blank)`, path);
  return { conversations, turnCount, blockSize: TEXT_DATASET_BLOCK_SIZE, skipped, file: path };
}

/** The `raw_payload` dataset type (verbatim request bodies; no timestamps). */
export const rawPayloadLoader: DatasetLoader = {
  name: 'raw_payload',
  defaultBlockSize: TEXT_DATASET_BLOCK_SIZE,
  timestamped: false,
  load: loadRawPayload,
};
