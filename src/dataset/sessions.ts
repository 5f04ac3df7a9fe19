/**
 * Session formation helpers: grouping row indices by a session key in order of first appearance, and
 * ordering a group's rows (Bailian, Mooncake and the text formats). Bailian's `parent_chat_id` links
 * are resolved in bailian-links.ts.
 */

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
