/**
 * `-f/--config FILE`: a YAML or JSON object of option values keyed by flag name (`request-rate`,
 * `request_rate`, `requestRate` and `--request-rate` all work; so do AIPerf's names, mapped or refused
 * as on the command line: ./aiperf-options.ts). Each value is read as the flag's
 * own value would be: a string as typed text (`"10,20"`, `"Name:Value"`), a list as a sweep or as
 * repeated flags, a number, boolean or object as it is. Flags typed on the command line win. Every
 * error names the file and the line of the key (`--config run.yaml:3: key "…"`); an unknown key gets
 * the closest flag as "Did you mean", and AIPerf's sectioned layout is named as such (./aiperf-yaml.ts).
 */
import { readFileSync } from 'node:fs';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { ConfigError } from '../errors.js';
import { type OptionField, setAt } from '../util/option-meta.js';
import { camel, kebab } from '../util/option-values.js';
import { closestName } from '../util/suggest.js';
import { readAiperfLayout } from './aiperf-config-layout.js';
import { aiperfOption, refusalMessage } from './aiperf-options.js';
import { aiperfSectionKey } from './aiperf-yaml.js';
import { itemFromText, valueFromText, valueProblem } from './schema-options.js';

/** A config file read: its object, and the 1-based line of each top-level key. */
interface FileObject {
  data: Record<string, unknown>;
  lineOf: Map<string, number>;
}

function readObject(file: string): FileObject {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`--config ${file}: ${(err as Error).message}`, '--config');
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const parseError = doc.errors[0];
  if (parseError !== undefined)
    throw new ConfigError(`--config ${file}: not valid YAML/JSON: ${parseError.message}`, '--config');
  const data: unknown = doc.toJS();
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new ConfigError(`--config ${file}: expected an object of flag: value pairs.`, '--config');
  const lineOf = new Map<string, number>();
  if (isMap(doc.contents))
    for (const pair of doc.contents.items)
      if (isScalar(pair.key) && pair.key.range !== undefined && pair.key.range !== null)
        lineOf.set(String(pair.key.value), lines.linePos(pair.key.range[0]).line);
  return { data: data as Record<string, unknown>, lineOf };
}

/** One file value as the field's input: strings are read as typed text; lists fold repeatable flags. */
function fileValue(field: OptionField, value: unknown): unknown {
  if (typeof value === 'string') return valueFromText(field, value, undefined);
  if (Array.isArray(value) && field.meta.repeatable === true) {
    return value.reduce<unknown>(
      (prev, item) => valueFromText(field, typeof item === 'string' ? item : JSON.stringify(item), prev),
      undefined,
    );
  }
  if (Array.isArray(value) && field.meta.list === true)
    return value.map((item) => (typeof item === 'string' ? itemFromText(field, item) : item));
  return value;
}

/**
 * The flag (without dashes) a file key names: one of `fields`, or AIPerf's name for one of them
 * (./aiperf-options.ts); null for an AIPerf option accepted with no effect.
 * @throws {ConfigError} naming the file, line and key, for a refused AIPerf option (with its reason).
 */
function ownFlag(where: string, key: string, value: unknown, fields: readonly OptionField[]): string | null {
  const flag = kebab(key);
  if (fields.some((f) => f.meta.flag === flag)) return flag;
  const row = aiperfOption(`--${flag}`);
  if (row === undefined) return flag;
  const status = row.status;
  if (status.kind === 'alias') return status.ours.slice(2);
  if (status.kind === 'same') return flag;
  if (status.kind === 'accepted' && (status.anyValue === true || value === (status.value ?? true)))
    return null;
  const shown = typeof value === 'string' ? value : undefined;
  throw new ConfigError(`${where}: key "${key}": ${refusalMessage(row, shown)}`, `--${flag}`);
}

/**
 * The flag a `no-<flag>: true|false` key negates (`no-gpu-telemetry`, as on the command line), when
 * `<flag>` is one of `fields` and the value a boolean; null otherwise.
 */
function negatedFlag(key: string, value: unknown, fields: readonly OptionField[]): string | null {
  const flag = kebab(key);
  if (!flag.startsWith('no-') || typeof value !== 'boolean') return null;
  const own = flag.slice('no-'.length);
  return fields.some((f) => f.meta.internal !== true && f.meta.flag === own) ? own : null;
}

/**
 * An unknown key, with the closest flag as "Did you mean", spelled in the key's own style
 * (`reqest_rate` → `request_rate`), as commander does for an unknown flag.
 */
function unknownKey(where: string, key: string, fields: readonly OptionField[]): ConfigError {
  const flags = fields.filter((f) => f.meta.internal !== true).map((f) => f.meta.flag);
  const guess = closestName(kebab(key), flags);
  const styled =
    guess === null
      ? null
      : key.includes('_')
        ? guess.replaceAll('-', '_')
        : /[A-Z]/.test(key)
          ? camel(guess)
          : guess;
  const hint = styled === null ? '' : ` (Did you mean ${styled}?)`;
  return new ConfigError(`${where}: unknown key "${key}".${hint}`, '--config');
}

/** Two keys of one file naming one option (`isl` and `synthetic-input-tokens-mean`): neither may win silently. */
function sameOptionTwice(where: string, first: string, second: string, flag: string): ConfigError {
  return new ConfigError(
    `${where}: keys "${first}" and "${second}" both set --${flag}; give it once.`,
    `--${flag}`,
  );
}

/**
 * A file in AIPerf's sectioned layout (./aiperf-yaml.ts), read as tokenload's flat keys
 * (./aiperf-config-layout.ts), every key taking the line of the key that gave the layout away; a flat
 * file as it is.
 * @throws {ConfigError} naming the file, that line, and every AIPerf key path tokenload does not take.
 */
function flatOf(file: string, read: FileObject, fields: readonly OptionField[]): FileObject {
  const objectFlags = new Set(
    fields.filter((f) => f.kind === 'record' || f.kind === 'object').map((f) => f.meta.flag),
  );
  const key = aiperfSectionKey(read.data, (k) => objectFlags.has(kebab(k)));
  if (key === null) return read;
  const line = read.lineOf.get(key) ?? 1;
  const reading = readAiperfLayout(read.data, fields);
  if (reading.unmapped.length > 0)
    throw new ConfigError(
      `--config ${file}:${line}: key "${key}": AIPerf's sectioned config layout; tokenload reads its keys where it has the option, but not: ${reading.unmapped.join('; ')}. Remove those keys, or write the file as tokenload's flat keys (one per flag of \`tokenload profile --help\`).`,
      '--config',
    );
  return { data: reading.flat, lineOf: new Map(Object.keys(reading.flat).map((k) => [k, line])) };
}

/**
 * Reads a config file into the schema input of `fields` (nested fields nested).
 * @throws {ConfigError} naming the file, line and key: unreadable, not a YAML/JSON object, AIPerf's
 *   sectioned layout, an unknown key (with the closest flag), two keys for one option (any spelling
 *   or AIPerf name), or a value the field rejects.
 */
export function readConfigFile(file: string, fields: readonly OptionField[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const keyOfFlag = new Map<string, string>();
  const read = flatOf(file, readObject(file), fields);
  for (const [key, given] of Object.entries(read.data)) {
    const where = `--config ${file}:${read.lineOf.get(key) ?? 1}`;
    const negated = negatedFlag(key, given, fields);
    const raw = negated === null ? given : !given;
    const flag = negated ?? ownFlag(where, key, raw, fields);
    if (flag === null) continue;
    const field = fields.find((f) => f.meta.internal !== true && f.meta.flag === flag);
    if (field === undefined) throw unknownKey(where, key, fields);
    const first = keyOfFlag.get(flag);
    if (first !== undefined) throw sameOptionTwice(where, first, key, flag);
    keyOfFlag.set(flag, key);
    if (raw === null || raw === undefined) continue;
    let value: unknown;
    try {
      value = fileValue(field, raw);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      throw new ConfigError(`${where}: key "${key}": ${err.message}`, `--${flag}`);
    }
    const problem = valueProblem(field, value);
    if (problem !== null) throw new ConfigError(`${where}: key "${key}": ${problem}`, `--${flag}`);
    setAt(out, field.path, value);
  }
  return out;
}
