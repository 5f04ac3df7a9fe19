/**
 * Reads what a finished run left in its artifact folder, as a user would: `profile_export.jsonl`
 * (epoch-ns fields kept exact as strings) and `profile_export_aiperf.json`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One `profile_export.jsonl` line, with the fields tests read. */
export interface ExportedRecord {
  metadata: Record<string, unknown> & { turn_index: number };
  metrics: Record<string, { value: number }>;
  error: { code: number; type: string; message: string } | null;
}

/** The run's per-request lines and parsed summary; `S` types the summary fields a test reads. */
export interface RunArtifacts<S> {
  records: ExportedRecord[];
  summary: S;
}

/**
 * Reads `dir`'s records and summary.
 * @throws when either file is missing or not JSON (the run did not write them).
 */
export function readRunArtifacts<S = Record<string, unknown>>(dir: string): RunArtifacts<S> {
  const text = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim();
  const records =
    text === ''
      ? []
      : text
          .split('\n')
          .map((l) => JSON.parse(l.replace(/"(\w+_ns)":(\d+)/g, '"$1":"$2"')) as ExportedRecord);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as S;
  return { records, summary };
}
