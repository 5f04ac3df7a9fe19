/**
 * `--developer-role-as-system`: a dataset message whose role is `developer` (OpenAI's newer name for
 * the system message, which vLLM answers with HTTP 400) sent with the `system` role instead.
 */
import type { Dataset, StreamedTurn, Turn } from './types.js';

/** Rows whose `developer` messages were sent as `system`; live while a stream is read. */
export interface DeveloperRewrites {
  rows: number;
}

/** Rewrites `turn`'s `developer` messages to `system` in place; true when it had one. */
export function developerToSystem(turn: Turn): boolean {
  if (turn.prompt.kind !== 'messages') return false;
  let found = false;
  for (const m of turn.prompt.messages) {
    if (m.role !== 'developer') continue;
    m.role = 'system';
    found = true;
  }
  return found;
}

/** Rewrites every turn of `dataset` in place, counting the rows rewritten into `counts`. */
export function rewriteDatasetDeveloperRole(dataset: Dataset, counts: DeveloperRewrites): void {
  for (const c of dataset.conversations) for (const t of c.turns) if (developerToSystem(t)) counts.rows += 1;
}

/** `turns` with each row rewritten as it is read, counted into `counts`. */
export async function* rewriteStreamDeveloperRole(
  turns: AsyncIterable<StreamedTurn>,
  counts: DeveloperRewrites,
): AsyncGenerator<StreamedTurn> {
  for await (const t of turns) {
    if (developerToSystem(t.turn)) counts.rows += 1;
    yield t;
  }
}
