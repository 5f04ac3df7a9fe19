/**
 * Commander options derived from a zod schema's {@link OptionMeta}: the flag, its value placeholder,
 * help text with the default, enum choices, and a parser that reads the typed text and checks it
 * against the field's own schema, so a bad value fails at once naming the flag. Commander sets no
 * defaults: a flag the user did not type stays absent, and the schema fills the default later.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, TokenloadError } from '../errors.js';
import { type OptionField, setAt, valueMessage } from '../util/option-meta.js';
import { looksNumeric, plainNumber, plainNumberProblem } from '../util/plain-number.js';
import { redactUrlPasswords } from '../util/redact.js';

function showDefault(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'object')
    return Object.keys(value as object).length === 0 ? undefined : JSON.stringify(value);
  return String(value);
}

/** The help line of a field: its text, then `(default: …)` from the metadata or the schema. */
function helpOf(field: OptionField, defaultOverride: unknown): string {
  const shown = field.meta.defaultText ?? showDefault(defaultOverride ?? field.defaultValue);
  if (field.kind === 'boolean') {
    if (field.defaultValue === true) return `${field.meta.help} (default: on)`;
    if (field.defaultValue === false) return field.meta.help;
  }
  return shown === undefined ? field.meta.help : `${field.meta.help} (default: ${shown})`;
}

/**
 * A typed number as a number when it is plain decimal (an integer field: digits only,
 * util/plain-number.ts); other text stays text, so the schema's error quotes what was typed.
 * @throws {ConfigError} for text `Number()` would read but that is not plain decimal (`0x1`, ` 1`,
 *   `1e3` for an integer): it was never taken as a number, and silence would say it was.
 */
function numberOrText(field: OptionField, text: string): number | string {
  const n = plainNumber(text, field.integer);
  if (n !== undefined) return n;
  if (looksNumeric(text, field.integer)) throw new ConfigError(plainNumberProblem(text, field.integer));
  return text;
}

/**
 * One item of a list field (`--concurrency 1,4`) as typed text, before the schema checks it.
 * @throws {ConfigError} for a number that is not plain decimal.
 */
export function itemFromText(field: OptionField, text: string): unknown {
  return field.kind === 'number' ? numberOrText(field, text) : text.trim();
}

/**
 * One typed text as the field's input value (before the field's schema checks it).
 * @throws {ConfigError} for a number that is not plain decimal, or what the field's own parser throws.
 */
export function valueFromText(field: OptionField, text: string, previous: unknown): unknown {
  if (field.meta.parse !== undefined) return field.meta.parse(text, previous);
  if (field.meta.list === true) return text.split(',').map((s) => itemFromText(field, s));
  if (field.kind === 'number') return numberOrText(field, text);
  if (field.kind === 'array')
    return text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  return text;
}

/**
 * Checks `value` (one item of a list field) against the field's schema.
 * @returns the message a user reads after the flag, or null when it is valid.
 */
export function valueProblem(field: OptionField, value: unknown): string | null {
  const items = field.meta.list === true && Array.isArray(value) ? value : [value];
  for (const item of items) {
    const parsed = field.schema.safeParse(item);
    const issue = parsed.success ? undefined : parsed.error.issues[0];
    if (issue !== undefined) return valueMessage(field, issue, item).replace(/\.?$/, '.');
  }
  return null;
}

/**
 * The error of a bad typed value. Commander's own message quotes the value as typed; a value holding
 * a URL password is quoted with the password redacted instead (by a {@link ConfigError} of ours).
 */
function badValue(field: OptionField, text: string, problem: string): Error {
  const shown = redactUrlPasswords(text, field.meta.unit === 'url');
  if (shown === text) return new InvalidArgumentError(problem);
  const flag = `--${field.meta.flag}`;
  return new ConfigError(`${flag} ${shown}: ${problem}`, flag);
}

function argParser(field: OptionField): (text: string, previous: unknown) => unknown {
  return (text, previous) => {
    const refusal = field.meta.refuse?.(text.trim());
    if (refusal !== undefined)
      throw new ConfigError(`--${field.meta.flag} ${refusal}`, `--${field.meta.flag}`);
    let value: unknown;
    try {
      value = valueFromText(field, text, previous);
    } catch (err) {
      if (!(err instanceof TokenloadError)) throw err;
      throw badValue(field, text, err.message);
    }
    const problem = field.meta.repeatable === true ? null : valueProblem(field, value);
    if (problem !== null) throw badValue(field, text, problem);
    return value;
  };
}

/** The commander options of one field (a boolean may have a `--no-` form too). */
function optionsOf(field: OptionField, defaultOverride: unknown, group?: string): Option[] {
  const { meta } = field;
  const flags = (long: string, arg = ''): string =>
    `${meta.short === undefined ? '' : `${meta.short}, `}${long}${arg}`;
  const out: Option[] = [];
  if (meta.variadic === true) {
    const opt = new Option(
      flags(`--${meta.flag}`, ` [${meta.unit ?? 'value'}...]`),
      helpOf(field, defaultOverride),
    );
    out.push(opt.argParser(argParser(field)), new Option(`--no-${meta.flag}`, `turn off --${meta.flag}`));
  } else if (field.kind === 'boolean') {
    out.push(new Option(flags(`--${meta.flag}`), helpOf(field, defaultOverride)));
    // A default-on or tri-state flag can be turned off; a default-off flag only on.
    if (field.defaultValue !== false) out.push(new Option(`--no-${meta.flag}`, `turn off --${meta.flag}`));
  } else {
    const opt = new Option(
      flags(`--${meta.flag}`, ` <${meta.unit ?? 'value'}>`),
      helpOf(field, defaultOverride),
    );
    // Choices are listed in --help; a field that refuses some values with a reason checks them itself.
    if (field.choices !== undefined && field.meta.parse === undefined) opt.choices(field.choices);
    if (field.choices === undefined || field.meta.parse !== undefined || field.meta.refuse !== undefined)
      opt.argParser(argParser(field));
    out.push(opt);
  }
  if (group !== undefined) for (const o of out) o.helpGroup(group);
  return out;
}

/** What {@link addSchemaOptions} returns: how to read the flags back as the schema's input. */
export interface SchemaFlags {
  /** The schema input of the flags the user typed (nested fields nested), without defaults. */
  read(cmd: Command): Record<string, unknown>;
}

/**
 * Adds one commander option per field (internal fields excluded) to `cmd`.
 * @param defaults - display defaults that differ from the schema's (`simulate --warmup-ms`).
 * @param groupOf - the `--help` heading of a field, if any.
 */
export function addSchemaOptions(
  cmd: Command,
  fields: readonly OptionField[],
  defaults: Record<string, unknown> = {},
  groupOf: (field: OptionField) => string | undefined = () => undefined,
): SchemaFlags {
  const attributes: Array<[OptionField, string]> = [];
  for (const field of fields) {
    if (field.meta.internal === true) continue;
    const options = optionsOf(field, defaults[field.path.join('.')], groupOf(field));
    for (const o of options) cmd.addOption(o);
    attributes.push([field, (options[0] as Option).attributeName()]);
  }
  return {
    read(command) {
      const out: Record<string, unknown> = {};
      for (const [field, attribute] of attributes) {
        if (command.getOptionValueSource(attribute) !== 'cli') continue;
        setAt(out, field.path, command.getOptionValue(attribute));
      }
      return out;
    },
  };
}
