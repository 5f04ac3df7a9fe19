/**
 * Option metadata carried by zod schemas: each configuration field's flag, help text, unit and
 * text parser live on the field itself, so the CLI's options, `--help`, the `-f` config file, the
 * validation messages and the redacted `input_config` are all derived from one schema.
 */
import { z } from 'zod';
import { closestName } from './suggest.js';

/** What a schema field says about itself as an option. */
export interface OptionMeta {
  /** Long flag without dashes, as typed: `request-rate`. */
  flag: string;
  /** One-letter alias with its dash: `-m`. */
  short?: string;
  /** Placeholder of the value in `--help` (`ms`, `tokens`, `r[,r…]`); omitted for boolean flags. */
  unit?: string;
  /** One line of help: what the option does. */
  help: string;
  /** The default as `--help` shows it, when the schema has none or it is derived elsewhere. */
  defaultText?: string;
  /**
   * Turns one typed string into the field's input value (`previous` is the value so far, for
   * repeatable flags). Absent: numbers are read as numbers, everything else stays a string.
   * @throws {Error} with a message saying what was expected.
   */
  parse?: (text: string, previous: unknown) => unknown;
  /** The flag may be given many times; `parse` accumulates. */
  repeatable?: boolean;
  /** A comma-separated list: `1,4,16` (sweeps). */
  list?: boolean;
  /**
   * The flag takes zero or more values (`--server-metrics [url…]`): alone it means true, values are
   * accumulated by `parse`, and `--no-<flag>` means false.
   */
  variadic?: boolean;
  /** The value is a secret: never written to artifacts. */
  secret?: boolean;
  /** The option exists for library callers only (no flag, no config-file key). */
  internal?: boolean;
  /**
   * A sentence added to the message of a value of the wrong type (text where a number is expected),
   * e.g. how to give what AIPerf's spelling of it meant (`--benchmark-grace-period inf`).
   */
  valueHint?: string;
  /**
   * For a value another tool takes that this option refuses (AIPerf's endpoint types tokenload
   * lacks): the whole sentence saying why and what to use instead, without the flag; undefined for
   * any other value, which the schema then checks as usual.
   */
  refuse?: (value: string) => string | undefined;
}

/** Every option's {@link OptionMeta}, keyed by its (outermost) field schema: a zod registry. */
const OPTION_REGISTRY = z.registry<OptionMeta>();

/** Attaches `meta` to `schema` (the outermost wrapper, so defaults and optionals keep it) and returns it. */
export function option<T extends z.ZodType>(schema: T, meta: OptionMeta): T {
  OPTION_REGISTRY.add(schema, meta);
  return schema;
}

/** The base kind of a field, which decides how a typed string becomes a value. */
export type OptionKind = 'number' | 'boolean' | 'string' | 'enum' | 'array' | 'record' | 'object';

/** One option of a schema, with what its schema says about it. */
export interface OptionField {
  /** Path of the field in the schema's input (`['synthetic', 'isl']` for a nested option). */
  path: readonly string[];
  meta: OptionMeta;
  kind: OptionKind;
  /** The schema's default (undefined when it has none). */
  defaultValue: unknown;
  /** A number field that takes integers only (`z.number().int()`): typed text must be digits. */
  integer: boolean;
  /** Allowed values of an enum field. */
  choices?: readonly string[];
  /** The field's own schema, to check one value alone. */
  schema: z.ZodType;
}

/**
 * Strips default, prefault, optional, nullable and pipe (transform) wrappers with zod's own
 * accessors; returns the base schema and the outermost default.
 */
function unwrap(schema: z.ZodType): { base: z.ZodType; defaultValue: unknown } {
  let s: z.ZodType = schema;
  let defaultValue: unknown;
  for (;;) {
    if (s instanceof z.ZodDefault || s instanceof z.ZodPrefault) {
      defaultValue ??= s.def.defaultValue;
      s = s.unwrap() as z.ZodType;
    } else if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
    else if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
    else return { base: s, defaultValue };
  }
}

function kindOf(base: z.ZodType): OptionKind {
  if (base instanceof z.ZodNumber) return 'number';
  if (base instanceof z.ZodBoolean) return 'boolean';
  if (base instanceof z.ZodEnum) return 'enum';
  if (base instanceof z.ZodArray) return 'array';
  if (base instanceof z.ZodRecord) return 'record';
  if (base instanceof z.ZodObject) return 'object';
  return 'string';
}

/** The object shape behind `schema` (through defaults, optionals and pipes), or undefined. */
export function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  const { base } = unwrap(schema);
  return base instanceof z.ZodObject ? (base.shape as Record<string, z.ZodType>) : undefined;
}

/**
 * Every field of `schema` that has {@link OptionMeta}, in declaration order, descending into
 * nested objects without metadata of their own (so `synthetic.isl` is found).
 */
export function optionFields(schema: z.ZodType, prefix: readonly string[] = []): OptionField[] {
  const shape = objectShape(schema);
  if (shape === undefined) return [];
  const out: OptionField[] = [];
  for (const [key, field] of Object.entries(shape)) {
    const path = [...prefix, key];
    const meta = OPTION_REGISTRY.get(field);
    if (meta === undefined) {
      out.push(...optionFields(field, path));
      continue;
    }
    const { base, defaultValue } = unwrap(field);
    const kind = kindOf(base);
    const choices = base instanceof z.ZodEnum ? base.options.map(String) : undefined;
    out.push({
      path,
      meta,
      kind,
      integer: base instanceof z.ZodNumber && base.isInt,
      defaultValue,
      schema: field,
      ...(choices === undefined ? {} : { choices }),
    });
  }
  return out;
}

/** A field's name as its error messages and `--help` call it: `--request-rate`. */
export function flagName(field: OptionField): string {
  return field.meta.internal === true ? field.path.join('.') : `--${field.meta.flag}`;
}

/** A zod issue in words a user reads after the flag's name: `expected an integer >= 1, got 0`. */
export function describeIssue(issue: z.core.$ZodIssue, value: unknown): string {
  if (value === undefined && issue.code === 'invalid_type') return 'a value is required';
  const got = `got ${shownValue(value)}`;
  switch (issue.code) {
    case 'too_small':
    case 'too_big': {
      const op = issue.code === 'too_small' ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      if (issue.origin === 'array') return `expected ${op} ${bound} values, ${got}`;
      if (issue.origin === 'string') return `expected ${op} ${bound} characters, ${got}`;
      // A bound the schema gives a reason for (its own message, not zod's "Too big: …") says it.
      const why = /^Too (big|small)\b/.test(issue.message) ? '' : `: ${issue.message}`;
      return `expected a number ${op} ${bound}, ${got}${why}`;
    }
    case 'invalid_type':
      return `expected ${issue.expected === 'int' ? 'an integer' : withArticle(issue.expected)}, ${got}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map(String).join(', ')}, ${got}`;
    case 'unrecognized_keys':
      return `unknown option ${issue.keys.join(', ')}`;
    default:
      return issue.message;
  }
}

/** A value as an error message quotes it: strings quoted, numbers as written (`NaN`, `Infinity`). */
function shownValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value) ?? String(value);
}

function withArticle(noun: string): string {
  const word = noun === 'record' ? 'object' : noun;
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

/** Sets `value` at `path` in `target`, creating nested objects. */
export function setAt(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let obj = target;
  for (const key of path.slice(0, -1)) {
    obj[key] ??= {};
    obj = obj[key] as Record<string, unknown>;
  }
  obj[path[path.length - 1] as string] = value;
}

/** The value at `path` inside `input`, or undefined. */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/**
 * Validates `input` against `schema`; on failure builds one error from the first issue, naming the
 * field's flag (or its path for internal fields) via `fail(message, option)`.
 * @throws whatever `fail` returns.
 */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  input: unknown,
  fail: (message: string, option: string) => Error,
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  const path = issue.path.map(String);
  const field = optionFields(schema).find((f) => f.path.join('.') === path.join('.'));
  if (field === undefined) {
    // A cross-field rule's message names its flags itself; an unknown key names the key.
    const at = issue.code === 'unrecognized_keys' ? [...path, ...issue.keys].join('.') : path.join('.');
    const text =
      issue.code === 'custom' ? issue.message : `${at}: ${describeIssue(issue, valueAt(input, path))}`;
    const hint = issue.code === 'unrecognized_keys' ? keyHint(schema, path, issue.keys) : '';
    throw fail(`${text}${hint}`, String((issue as { params?: { option?: string } }).params?.option ?? at));
  }
  const name = flagName(field);
  throw fail(`${name}: ${valueMessage(field, issue, valueAt(input, issue.path))}`, name);
}

/**
 * What a user reads of `value` rejected by `field` ({@link describeIssue}), with the field's
 * {@link OptionMeta.valueHint} after it for a value of the wrong type; the field's
 * {@link OptionMeta.refuse} sentence instead, for a value it refuses.
 */
export function valueMessage(field: OptionField, issue: z.core.$ZodIssue, value: unknown): string {
  const refusal = typeof value === 'string' ? field.meta.refuse?.(value) : undefined;
  if (refusal !== undefined) return refusal;
  const problem = describeIssue(issue, value);
  const hint = issue.code === 'invalid_type' ? field.meta.valueHint : undefined;
  return hint === undefined ? problem : `${problem.replace(/\.?$/, '.')} ${hint}`;
}

/** " (Did you mean requestCount?)" for the first unknown key close to a field at `path`, or ''. */
function keyHint(schema: z.ZodType, path: readonly string[], keys: readonly string[]): string {
  const siblings = optionFields(schema)
    .filter((f) => f.path.length > path.length && path.every((p, i) => f.path[i] === p))
    .map((f) => f.path[path.length] as string);
  for (const key of keys) {
    const guess = closestName(key, new Set(siblings));
    if (guess !== null) return ` (Did you mean ${guess}?)`;
  }
  return '';
}
