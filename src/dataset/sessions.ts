/**
 * Session formation helpers: finding the root of a `parent_chat_id` chain (Bailian) and grouping row
 * indices by a session key in order of first appearance (Bailian and Mooncake).
 */

/** `parent_chat_id` of a root request. */
export const NO_PARENT = -1;

/** Marks a chat id whose root is being resolved (never a valid chat id). */
const VISITING = Number.NaN;

/**
 * For every row, the `chat_id` of the earliest ancestor present in the rows (AIPerf Bailian semantics).
 *
 * Nodes are chat ids; when a `chat_id` repeats, the parent of its LAST row is used for lookups. A walk
 * up the chain stops at a parent of -1, a parent not among the rows, a self-parent, or a cycle; in a
 * cycle the root is the member at which the walk first closes, and every member gets that same root.
 * Results are memoized along each walk (path compression), so the whole pass is O(rows).
 * Source: AIPerf `src/aiperf/dataset/loader/bailian_trace.py` (session grouping).
 * @param chatIds `chat_id` per row, file order.
 * @param parentIds `parent_chat_id` per row, same length.
 * @returns root chat id per row, same length.
 */
export function findChainRoots(chatIds: readonly number[], parentIds: readonly number[]): number[] {
  const parentOf = new Map<number, number>();
  for (let i = 0; i < chatIds.length; i += 1) parentOf.set(chatIds[i]!, parentIds[i]!);
  // rootOf holds VISITING for nodes on the current walk, so a cycle is seen without a separate set.
  const rootOf = new Map<number, number>();
  const path: number[] = [];

  const resolve = (start: number): number => {
    let current = start;
    let root = start;
    for (;;) {
      const known = rootOf.get(current);
      if (known !== undefined) {
        root = Number.isNaN(known) ? current : known;
        break;
      }
      rootOf.set(current, VISITING);
      path.push(current);
      const parent = parentOf.get(current)!;
      if (parent === NO_PARENT || parent === current || !parentOf.has(parent)) {
        root = current;
        break;
      }
      current = parent;
    }
    for (const id of path) rootOf.set(id, root);
    path.length = 0;
    return root;
  };

  const roots = new Array<number>(chatIds.length);
  for (let i = 0; i < chatIds.length; i += 1) roots[i] = rootOf.get(chatIds[i]!) ?? resolve(chatIds[i]!);
  return roots;
}

/** Row indices that share one session key. */
export interface RowGroup<K> {
  key: K;
  /** Row indices in file order. */
  rows: number[];
}

/**
 * Groups row indices by key, groups ordered by the first row of each key.
 * @param keys session key per row, file order.
 */
export function groupByKey<K>(keys: readonly K[]): RowGroup<K>[] {
  const groups: RowGroup<K>[] = [];
  const indexOfKey = new Map<K, number>();
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i]!;
    const existing = indexOfKey.get(key);
    if (existing === undefined) {
      indexOfKey.set(key, groups.length);
      groups.push({ key, rows: [i] });
    } else {
      groups[existing]!.rows.push(i);
    }
  }
  return groups;
}

/**
 * Sorts a group's row indices by a numeric key, in place; the sort is stable, so ties keep file order.
 * @param sortKeys key per row index (Bailian `turn`).
 */
export function sortRowsStable(rows: number[], sortKeys: readonly number[]): void {
  if (rows.length > 1) rows.sort((a, b) => sortKeys[a]! - sortKeys[b]!);
}
