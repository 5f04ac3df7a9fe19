/**
 * `-f/--config FILE`: a YAML or JSON object of option values keyed by flag name (`request-rate`,
 * `request_rate`, `requestRate` and `--request-rate` all work; so do AIPerf's names, mapped or refused
 * as on the command line: ./aiperf-options.ts). Each value is read as the flag's
 * own value would be: a string as typed text (`"10,20"`, `"Name:Value"`), a list as a sweep or as
 * repeated flags, a number, boolean or object as it is. Flags typed on the command line win.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../errors.js';
import { type OptionField, setAt } from '../util/option-meta.js';
import { kebab } from '../util/option-values.js';
import { aiperfOption, refusalMessage } from './aiperf-options.js';
import { itemFromText, valueFromText, valueProblem } from './schema-options.js';

function readObject(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`--config ${file}: ${(err as Error).message}`, '--config');
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`--config ${file}: not valid YAML/JSON: ${(err as Error).message}`, '--config');
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new ConfigError(`--config ${file}: expected an object of flag: value pairs.`, '--config');
  return data as Record<string, unknown>;
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
 * @throws {ConfigError} naming the file and key, for a refused AIPerf option (with its reason).
 */
function ownFlag(file: string, key: string, value: unknown, fields: readonly OptionField[]): string | null {
  const flag = kebab(key);
  if (fields.some((f) => f.meta.flag === flag)) return flag;
  const row = aiperfOption(`--${flag}`);
  if (row === undefined) return flag;
  const status = row.status;
  if (status.kind === 'alias') return status.ours.slice(2);
  if (status.kind === 'same') return flag;
  if (status.kind === 'accepted' && value === (status.value ?? true)) return null;
  const shown = typeof value === 'string' ? value : undefined;
  throw new ConfigError(`--config ${file}: key "${key}": ${refusalMessage(row, shown)}`, `--${flag}`);
}

/** Two keys of one file naming one option (`isl` and `synthetic-input-tokens-mean`): neither may win silently. */
function sameOptionTwice(file: string, first: string, second: string, flag: string): ConfigError {
  return new ConfigError(
    `--config ${file}: keys "${first}" and "${second}" both set --${flag}; give it once.`,
    `--${flag}`,
  );
}

/**
 * Reads a config file into the schema input of `fields` (nested fields nested).
 * @throws {ConfigError} naming the file and key: unreadable, not a YAML/JSON object, an unknown key,
 *   two keys for one option (any spelling or AIPerf name), or a value the field rejects.
 */
export function readConfigFile(file: string, fields: readonly OptionField[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const keyOfFlag = new Map<string, string>();
  for (const [key, raw] of Object.entries(readObject(file))) {
    const flag = ownFlag(file, key, raw, fields);
    if (flag === null) continue;
    const field = fields.find((f) => f.meta.internal !== true && f.meta.flag === flag);
    if (field === undefined) throw new ConfigError(`--config ${file}: unknown key "${key}".`, '--config');
    const first = keyOfFlag.get(flag);
    if (first !== undefined) throw sameOptionTwice(file, first, key, flag);
    keyOfFlag.set(flag, key);
    if (raw === null || raw === undefined) continue;
    let value: unknown;
    try {
      value = fileValue(field, raw);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      throw new ConfigError(`--config ${file}: key "${key}": ${err.message}`, `--${flag}`);
    }
    const problem = valueProblem(field, value);
    if (problem !== null) throw new ConfigError(`--config ${file}: key "${key}": ${problem}`, `--${flag}`);
    setAt(out, field.path, value);
  }
  return out;
}
