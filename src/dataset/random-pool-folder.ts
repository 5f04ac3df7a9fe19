/**
 * `random_pool` from a folder (AIPerf's custom-dataset tutorial, "Random Pool Datasets", and its
 * random-pool loader): each `*.jsonl` file of the folder (sorted by name; other files ignored) is a
 * pool named by its file name without `.jsonl`, its lines the pool's entries (the fields of a
 * `random_pool` line). A conversation is one request made of one entry drawn at random from each
 * pool, with replacement, the pools in name order:
 * - its texts are the entries' texts in that order, each named as the entry names it (`texts`
 *   `{name, contents}`), else by its pool's name, so the rankings endpoints find `query` and
 *   `passages` in `Turn.namedTexts` when the folder holds `query.jsonl` and `passages.jsonl`;
 * - a chat request sends them as one user message: a string when there is one text, else a content
 *   array of text parts, one per text, as AIPerf renders a turn with several texts;
 * - its output length is the first entry's (in pool order) that has one; the entries' `extra`
 *   fields are merged in pool order.
 * `poolDraws` conversations are drawn (`--conversation-num`, 100 by default as in AIPerf), each pool
 * from its own random stream keyed by the seed and the pool name.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ResolvedLoadOptions } from './load-options.js';
import { seededRandom } from './random.js';
import { parseTextTurn } from './text-turn.js';
import { collectTraceRows, emptySkipCounts, type TraceRow } from './trace-rows.js';
import {
  type Conversation,
  type Dataset,
  DatasetError,
  type NamedText,
  type PromptSpec,
  type SourceRef,
  type Turn,
} from './types.js';
import type { JsonObject } from './validate.js';

/** Conversations drawn when `--conversation-num` is not given (AIPerf's default). */
export const DEFAULT_POOL_DRAWS = 100;

/** One pool entry: its turn (validated as a `random_pool` line) and its texts, named. */
interface PoolEntry extends TraceRow {
  texts: NamedText[];
}

/** One pool: its name, entries, and malformed lines skipped (`--skip-bad-lines`). */
interface Pool {
  name: string;
  entries: PoolEntry[];
  badLines: number;
}

/** The entry's texts: `text`, or each of `texts`, named as written or by the pool. */
function entryTexts(row: JsonObject, pool: string): NamedText[] {
  if (typeof row.text === 'string') return [{ name: pool, contents: [row.text] }];
  const texts = Array.isArray(row.texts) ? row.texts : [];
  return texts.map((t) => {
    if (typeof t === 'string') return { name: pool, contents: [t] };
    const o = t as JsonObject;
    return {
      name: typeof o.name === 'string' && o.name !== '' ? o.name : pool,
      contents: o.contents as string[],
    };
  });
}

async function readPool(path: string, options: ResolvedLoadOptions): Promise<Pool> {
  const name = basename(path, '.jsonl');
  const parse = (value: unknown, at: SourceRef): PoolEntry => ({
    turn: parseTextTurn(value, '', { timing: false, sessionId: false }, at).turn,
    texts: entryTexts(value as JsonObject, name),
  });
  const { rows, skipped } = await collectTraceRows(path, options, parse);
  return { name, entries: rows, badLines: skipped.badLines };
}

/** The prompt of texts: one text alone, else one user message of text parts. */
function promptOf(texts: readonly NamedText[]): PromptSpec {
  const parts = texts.flatMap((t) => t.contents);
  if (parts.length === 1) return { kind: 'text', text: parts[0] as string };
  return {
    kind: 'messages',
    messages: [{ role: 'user', content: parts.map((text) => ({ type: 'text' as const, text })) }],
  };
}

/** One conversation's request: one entry of each pool, merged. */
function mergedTurn(picked: readonly PoolEntry[]): Turn {
  const texts = picked.flatMap((e) => e.texts);
  const maxTokens = picked.find((e) => e.turn.maxTokens !== undefined)?.turn.maxTokens;
  const extras = picked.flatMap((e) => (e.turn.extra === undefined ? [] : [e.turn.extra]));
  return {
    index: 0,
    prompt: promptOf(texts),
    namedTexts: texts,
    source: (picked[0] as PoolEntry).turn.source,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(extras.length === 0 ? {} : { extra: Object.assign({}, ...extras) }),
  };
}

/** The `*.jsonl` files of `folder`, sorted by name. */
async function poolFiles(folder: string): Promise<string[]> {
  const names = (await readdir(folder)).filter((n) => n.endsWith('.jsonl')).sort();
  const files: string[] = [];
  for (const n of names) if ((await stat(join(folder, n))).isFile()) files.push(join(folder, n));
  return files;
}

/**
 * Loads a folder of pools and draws its conversations.
 * @throws {DatasetError} for a folder without `*.jsonl` files, an empty pool, or a malformed line
 *   (file:line and field).
 */
export async function loadPoolFolder(
  folder: string,
  options: ResolvedLoadOptions,
  draws: number,
  seed: number,
): Promise<Dataset> {
  const files = await poolFiles(folder);
  if (files.length === 0)
    throw new DatasetError(`${folder}: a random_pool folder holds no *.jsonl file`, folder);
  const pools: Pool[] = [];
  for (const file of files) {
    const pool = await readPool(file, options);
    if (pool.entries.length === 0) throw new DatasetError(`${file}: the pool has no entry`, file);
    pools.push(pool);
  }
  const streams = pools.map((p) => seededRandom(seed, `random_pool:${p.name}`));
  const conversations: Conversation[] = Array.from({ length: draws }, (_, i) => ({
    id: `random_pool-${i + 1}`,
    turns: [mergedTurn(pools.map((p, k) => p.entries[streams[k]!.intBelow(p.entries.length)] as PoolEntry))],
    contextMode: 'message_array_with_responses',
  }));
  const skipped = emptySkipCounts();
  skipped.badLines = pools.reduce((sum, p) => sum + p.badLines, 0);
  return { conversations, turnCount: draws, blockSize: options.blockSize, skipped, file: folder };
}
