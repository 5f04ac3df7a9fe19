/**
 * Text rendering of a {@link TraceCheckReport} for the terminal (`tokenload analyze-trace --check`).
 */
import type { TraceCheckReport } from './trace-check-findings.js';

/** The report as terminal text, ending with a newline: one paragraph per finding, then the skipped checks. */
export function formatCheck(file: string, r: TraceCheckReport): string {
  const lines = [`Trace check: ${file} (${r.rows.toLocaleString('en-US')} rows)`];
  if (r.findings.length === 0) lines.push('No check fired.');
  for (const f of r.findings) {
    lines.push(`Warning [${f.check}] (${f.count.toLocaleString('en-US')}): ${f.message}.`);
    lines.push(`  What to do: ${f.advice}.`);
  }
  for (const s of r.skipped) lines.push(`Skipped [${s.check}]: ${s.reason}.`);
  return `${lines.join('\n')}\n`;
}
