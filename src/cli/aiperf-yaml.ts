/**
 * AIPerf's YAML config layout met by `-f`: AIPerf groups options in sections (the v2 envelope
 * `schemaVersion:` / `benchmark: {model, endpoint: {url, type, streaming}, dataset: {…}, phases: […],
 * artifacts: {dir}}` / `sweep:`, and the older `endpoint:` / `input:` / `loadgen:` / `output:`
 * sections), while tokenload's file is flat, one key per flag. Such a file is not read: its options
 * run through phases, sweeps and datasets tokenload does not have, so a partial reading would run
 * something else than the file says. It is named as AIPerf's layout instead, with the flat keys its
 * values map to (one per leaf whose name, or section and name, is a tokenload flag or AIPerf's name
 * for one), ready to paste, and the paths that have no flat key.
 */
import { kebab } from '../util/option-values.js';
import { aiperfOption } from './aiperf-options.js';

/** AIPerf v2 paths (below `benchmark`) whose flag is not their name: `artifacts.dir` is `--artifact-dir`. */
const RENAMED: Readonly<Record<string, string>> = {
  'artifacts.dir': 'artifact-dir',
  'dataset.entries': 'num-dataset-entries',
  'dataset.path': 'input-file',
  'dataset.format': 'custom-dataset-type',
  'endpoint.type': 'endpoint-type',
  'tokenizer.name': 'tokenizer',
  'output.artifact_directory': 'artifact-dir',
};

function isSection(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The top-level key that makes `data` AIPerf's sectioned layout: `schemaVersion`, or a key whose
 * value is a section although tokenload's key of that name (if any) takes no object. Null when the
 * file is flat.
 */
export function aiperfSectionKey(
  data: Record<string, unknown>,
  takesObject: (key: string) => boolean,
): string | null {
  if ('schemaVersion' in data) return 'schemaVersion';
  for (const [key, value] of Object.entries(data)) if (isSection(value) && !takesObject(key)) return key;
  return null;
}

/** The tokenload flag a leaf at `path` sets, if its name (or section-name, or a rename) is one. */
function flagOfPath(path: readonly string[], isFlag: (flag: string) => boolean): string | null {
  const inner = path[0] === 'benchmark' ? path.slice(1) : path;
  const renamed = RENAMED[inner.slice(-2).join('.')];
  if (renamed !== undefined) return renamed;
  const leaf = path[path.length - 1] ?? '';
  const parent = path[path.length - 2];
  for (const name of [leaf, ...(parent === undefined ? [] : [`${parent}-${leaf}`])]) {
    const flag = kebab(name);
    if (isFlag(flag)) return flag;
    const row = aiperfOption(`--${flag}`);
    if (row?.status.kind === 'alias') return row.status.ours.slice(2);
    if (row?.status.kind === 'same') return flag;
  }
  return null;
}

/** Every leaf of `data` (a value that is not a section), with its path. */
function leaves(data: unknown, path: string[] = []): Array<[string[], unknown]> {
  if (!isSection(data)) return [[path, data]];
  return Object.entries(data).flatMap(([k, v]) => leaves(v, [...path, k]));
}

/** A leaf's value as a flat key's value: scalars as YAML writes them, a list of scalars as a list. */
function shown(value: unknown): string | null {
  if (typeof value === 'string') return /^[\w./:@-]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null))
    return JSON.stringify(value);
  return null;
}

/**
 * The message for an AIPerf-layout file: what it is, how tokenload's file is written, the flat keys
 * its values map to and the paths without one.
 * @param where `--config FILE:LINE` of the key that gave the layout away.
 */
export function aiperfLayoutMessage(
  where: string,
  key: string,
  data: Record<string, unknown>,
  isFlag: (flag: string) => boolean,
): string {
  const mapped: string[] = [];
  const unmapped: string[] = [];
  for (const [path, value] of leaves(data)) {
    if (path[0] === 'schemaVersion') continue;
    const flag = flagOfPath(path, isFlag);
    const text = flag === null ? null : shown(value);
    if (flag !== null && text !== null && !mapped.some((m) => m.startsWith(`${flag}:`)))
      mapped.push(`${flag}: ${text}`);
    else unmapped.push(path.join('.'));
  }
  const head = `${where}: key "${key}": this is AIPerf's sectioned config layout, which tokenload does not read; tokenload's config file is flat, one key per flag of \`tokenload profile --help\` (e.g. "concurrency: 8").`;
  const flat =
    mapped.length === 0 ? '' : `\nIts values as tokenload keys:\n${mapped.map((m) => `  ${m}`).join('\n')}`;
  const rest = unmapped.length === 0 ? '' : `\nNo tokenload key for: ${unmapped.join(', ')}`;
  return `${head}${flat}${rest}`;
}
