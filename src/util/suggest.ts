/**
 * "Did you mean …?" for a name a user mistyped (a config-file key, a `--goodput` tag): the known
 * name closest to it by edit distance, when it is close enough to be the likely intent.
 */

/**
 * Edits between `a` and `b`: insertions, deletions, substitutions, and swaps of two neighbouring
 * characters (`frist` → `first` is one edit).
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const up = rows[i - 1] as number[];
      const same = a[i - 1] === b[j - 1];
      let best = Math.min(
        (up[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (up[j - 1] as number) + (same ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row.push(best);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * The candidate closest to `word` (case-insensitive), or null when none is within about a third of
 * its length (at least 2 edits): a suggestion must be likely, not merely the nearest.
 */
export function closestName(word: string, candidates: Iterable<string>): string | null {
  const lower = word.toLowerCase();
  const limit = Math.max(2, Math.ceil(lower.length / 3));
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}
