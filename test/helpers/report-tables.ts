/**
 * The summary tables a user compares: the console's (profile_export_console.txt, the console text)
 * and the HTML report's, each as rows of [label, ...cells].
 */

/** Rows of the console table as [label, ...cells]; wrapped labels are joined with a space. */
export function consoleRows(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('│')) continue;
    const cells = line
      .split('│')
      .slice(1, -1)
      .map((c) => c.trim());
    const last = rows.at(-1);
    if (last !== undefined && cells.slice(1).every((c) => c === '')) last[0] = `${last[0]} ${cells[0]}`;
    else rows.push(cells);
  }
  return rows.filter((r) => r[0] !== 'Metric');
}

/** Rows of the report's summary table as [label, ...cells]. */
export function htmlSummaryRows(html: string): string[][] {
  const from = html.indexOf('id="summary"');
  const section = html.slice(from, html.indexOf('<section', from));
  return [...section.matchAll(/<tr>(<td.*?)<\/tr>/g)].map((m) =>
    [...(m[1] ?? '').matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((c) => c[1] ?? ''),
  );
}
