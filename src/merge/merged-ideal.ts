/**
 * The ideal prefix cache of a merged run, over every shard's requests in send order. Each shard's
 * records carry `ideal_cached_tokens` against that shard's own earlier requests only; the server
 * saw them all, so a block one shard sent first is a hit for another shard's later request (a
 * system prompt every session shares). Judged per shard, the cache check would take those hits for
 * a cache left warm. Here the merge loads the run's input again (the first shard's `input_config`,
 * through the run's own loader: the same sessions, synthesis and block ids), rebuilds each
 * request's blocks from its session and `turn_index` (dataset/prefix-chain.ts, with the tail key the
 * sender used), admits them per server in the order the requests started
 * (`request_start_ns` on the merged time base) and settles each at its `sent` time, as a run does.
 *
 * A request is admitted as a run admits it: its turn is a synthesized prompt and it was sent whole
 * (its `prompt_layout` is one user message, no system prompt), failed requests included. When the
 * input cannot be loaded again (moved, another machine) or a record names a turn it does not
 * have, the result says why, and the merge keeps the shards' own figures without judging them.
 *
 * A request's session is its record's `session_id`, not its `conversation_id`: in a Bailian tree
 * replay every request of a tree is recorded under the root's id with its depth as `turn_index`, so
 * sibling follow-ups share that pair, while `session_id` names the branch session
 * (`<root>/<chat_id>`, the `inputs.json` entry and the sender's tail key). The record carries it
 * because nothing else ties a request to its row for sure: two siblings may have the same ISL, and
 * their send times depend on their parents' answers. Records written before the field existed read
 * it as `conversation_id`, which is right for every session but a tree's branches: with a tree
 * replay's input, such records leave the cache check not judged.
 */

import { planRun } from '../config/plan.js';
import { profileConfig } from '../config/schema.js';
import { type CacheBlock, IdealPrefixCache, promptBlocks } from '../dataset/prefix-chain.js';
import type { Dataset, Turn } from '../dataset/types.js';
import type { EpochBase } from '../export/record-reader.js';
import { loadRunDataset } from '../run/inputs.js';
import { mergeRecordFiles, type RecordSource } from './record-stream.js';

/** The merged ideal of each request, by `x_request_id` (null: the cache had filled), or why there is none. */
export type MergedIdeal = { tokens: Map<string, number | null> } | { unavailable: string };

/** One admitted request, as the first pass over the records finds it. */
interface Sent {
  id: string;
  server: string;
  startNs: number;
  sentNs: number | null;
  blocks: readonly CacheBlock[];
}

/** Why records without `session_id` cannot be matched to a tree replay's requests. */
const NO_SESSION_ID =
  'the records carry no session_id (written by a tokenload before it), so the sibling requests of a Bailian tree replay cannot be told apart';

/**
 * Turns of synthesized prompts by `session:turn_index` (the sender's tail key): a tree's branch by
 * its own id, its turns from its depth on.
 */
function turnsByKey(dataset: Dataset): Map<string, Turn> {
  const out = new Map<string, Turn>();
  for (const c of dataset.conversations)
    for (const t of c.turns) {
      // A branch's turns are sent (and recorded) at their depth in the tree (timing/fixed-schedule.ts).
      const index = (c.branch?.depth ?? 0) + t.index;
      if (t.prompt.kind === 'synthetic') out.set(`${c.id}:${index}`, t);
    }
  return out;
}

async function loadAgain(inputConfig: Record<string, unknown>): Promise<Dataset | string> {
  try {
    // The input is all that is loaded: a --simulator run's summary names the simulator's URL too.
    const { simulatorOptions: _sim, ...rest } = inputConfig;
    const asked = { ...rest, simulator: false } as Parameters<typeof profileConfig>[0];
    const plan = planRun(profileConfig(asked));
    if (plan.systemPrompt !== undefined || plan.systemPromptFile !== undefined)
      return 'a system prompt is sent in front of every prompt (no request is admitted)';
    return await loadRunDataset(plan);
  } catch (err) {
    return `the run's input could not be loaded again (${(err as Error).message})`;
  }
}

/** The admitted requests of every source, sorted by start; a string naming the first unknown turn. */
async function sentRequests(
  sources: readonly RecordSource[],
  time: EpochBase,
  turns: ReadonlyMap<string, Turn>,
  tree: boolean,
): Promise<Sent[] | string> {
  const sent: Sent[] = [];
  for await (const { record, text } of mergeRecordFiles(sources, time)) {
    if (tree && !text.includes('"session_id":')) return NO_SESSION_ID;
    const raw = record.raw;
    if (raw.promptLayout !== 'user×1') continue;
    const session = raw.sessionId ?? raw.conversationId;
    const key = `${session}:${raw.turnIndex}`;
    const turn = turns.get(key);
    if (turn === undefined) {
      if (record.metrics.ideal_cached_tokens === undefined) continue;
      return `a record names session ${session} turn ${raw.turnIndex}, which the input loaded again has no synthesized prompt for`;
    }
    if (turn.prompt.kind !== 'synthetic') continue;
    const p = turn.prompt;
    sent.push({
      id: raw.xRequestId,
      server: raw.serverUrl ?? '',
      startNs: raw.startNs,
      sentNs: raw.sentNs,
      blocks: promptBlocks(p.hashIds, p.inputLength, p.blockSize, key),
    });
  }
  return sent.sort((a, b) => a.startNs - b.startNs);
}

/**
 * The merged ideal of every admitted request of `sources` (module comment), read on time base
 * `time`; `inputConfig` is the run's (the first shard's `input_config`). Never throws: a problem
 * is the `unavailable` reason.
 */
export async function mergedIdeal(
  inputConfig: Record<string, unknown>,
  sources: readonly RecordSource[],
  time: EpochBase,
): Promise<MergedIdeal> {
  const dataset = await loadAgain(inputConfig);
  if (typeof dataset === 'string') return { unavailable: dataset };
  let sent: Sent[] | string;
  try {
    const tree = dataset.conversations.some((c) => c.branch !== undefined);
    sent = await sentRequests(sources, time, turnsByKey(dataset), tree);
  } catch (err) {
    return { unavailable: (err as Error).message };
  }
  if (typeof sent === 'string') return { unavailable: sent };
  const caches = new Map<string, IdealPrefixCache>();
  const admitted = sent.map((s) => {
    const cache = caches.get(s.server) ?? new IdealPrefixCache();
    caches.set(s.server, cache);
    return { s, admission: cache.admit(s.blocks, s.startNs) };
  });
  const tokens = new Map<string, number | null>();
  for (const { s, admission } of admitted) tokens.set(s.id, admission.settle(s.sentNs)?.tokens ?? null);
  return { tokens };
}
