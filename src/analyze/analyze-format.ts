/**
 * Text rendering of a {@link TraceAnalysis} for the terminal.
 */
import Table from 'cli-table3';
import { repeatedChatIdsWarning, unlinkedRowsWarning } from '../dataset/bailian-links.js';
import { blockSizeWarning } from '../dataset/prefix-analysis.js';
import type { SkipCounts } from '../dataset/types.js';
import type { TraceAnalysis } from './analyze-trace.js';
import type { Distribution } from './distribution.js';

const PLAIN = { head: [], border: [], compact: true };

function num(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function pct(ratio: number): string {
  return `${(ratio * 100).toFixed(1)}%`;
}

function distRow(name: string, d: Distribution | undefined): string[] {
  if (d === undefined) return [name, 'N/A', 'N/A', 'N/A', 'N/A', 'N/A', 'N/A', '0'];
  return [name, num(d.min), num(d.p50), num(d.p90), num(d.p99), num(d.max), num(d.mean, 1), num(d.count)];
}

function distTable(a: TraceAnalysis): string {
  const head = ['tokens', 'min', 'p50', 'p90', 'p99', 'max', 'mean', 'rows'];
  const table = new Table({
    head,
    colAligns: head.map((_, i) => (i === 0 ? 'left' : 'right')),
    style: PLAIN,
  });
  table.push(distRow('ISL', a.isl), distRow('OSL', a.osl));
  return table.toString();
}

function timeLines(a: TraceAnalysis): string[] {
  if (a.firstTimestampMs === null) return ['Time span: no timestamps'];
  const rate = a.meanArrivalRatePerS === null ? 'N/A' : `${a.meanArrivalRatePerS.toFixed(2)} requests/s`;
  return [
    `Time span: ${num(a.spanS, 1)} s (trace ${num(a.firstTimestampMs, 0)} → ${num(a.lastTimestampMs ?? 0, 0)} ms)`,
    `Mean arrival rate: ${rate}`,
    ...(a.timeUnitWarning === null ? [] : [`Warning: ${a.timeUnitWarning}`]),
  ];
}

function synthesisLine(s: SkipCounts): string[] {
  const parts: string[] = [];
  if (s.overMaxIsl !== undefined) parts.push(`${num(s.overMaxIsl)} rows over --synthesis-max-isl dropped`);
  if (s.maxOslCapped !== undefined)
    parts.push(`${num(s.maxOslCapped)} output lengths capped at --synthesis-max-osl`);
  if ((s.promptUnscaled ?? 0) > 0)
    parts.push(`${num(s.promptUnscaled ?? 0)} rows without input_length left unscaled`);
  return parts.length === 0 ? [] : [`Synthesis: ${parts.join(', ')}`];
}

function skippedLine(a: TraceAnalysis): string[] {
  const { beforeStartOffset, afterEndOffset, badLines, unlinkedRows } = a.skipped;
  const n = beforeStartOffset + afterEndOffset + badLines;
  const lines = n === 0 ? [] : [`Skipped rows: ${n} (${badLines} malformed)`];
  lines.push(...synthesisLine(a.skipped));
  if (unlinkedRows !== undefined) lines.push(`Warning: ${unlinkedRowsWarning(unlinkedRows)}`);
  const repeated = a.skipped.repeatedChatIds;
  if (repeated !== undefined) lines.push(`Warning: ${repeatedChatIdsWarning(repeated)}`);
  return lines;
}

function siblingLines(a: TraceAnalysis): string[] {
  const s = a.siblings;
  if (s === undefined) return [];
  return [
    `Follow-ups with siblings: ${num(s.rowsWithSiblings)}, under ${num(s.branchingParents)} branching parents (a fixed schedule sends siblings side by side; --bailian-linear-sessions one after the other)`,
  ];
}

/** The analysis as terminal text, ending with a newline. */
export function formatAnalysis(a: TraceAnalysis): string {
  const turns = a.turnHistogram.map((h) => `${h.turns}: ${num(h.sessions)}`).join(', ');
  const types = a.typeMix
    .map((t) => `${t.type} ${num(t.rows)} (${pct(t.rows / Math.max(1, a.rows))})`)
    .join(', ');
  const p = a.prefix;
  return [
    `Trace: ${a.file} (${a.datasetType}, ${a.blockSize}-token blocks)`,
    `Rows: ${num(a.rows)}   Sessions: ${num(a.sessions)}`,
    `Sessions by turn count (turns: sessions): ${turns}`,
    ...siblingLines(a),
    ...timeLines(a),
    ...skippedLine(a),
    distTable(a),
    `Type mix: ${types}`,
    `Ideal prefix hit (infinite cache): ${pct(p.tokenHitRatio)} of prompt tokens (${num(p.hitTokens)} / ${num(p.totalTokens)}), ${pct(p.blockHitRatio)} of blocks (${num(p.hitBlocks)} / ${num(p.totalBlocks)})`,
    ...(p.sizeConflictIds > 0 ? [`Warning: ${blockSizeWarning(p.sizeConflictIds)}`] : []),
    '',
  ].join('\n');
}
