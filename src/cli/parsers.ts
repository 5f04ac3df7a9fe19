/**
 * Value parsers for CLI flags. Each throws commander's `InvalidArgumentError`, so a bad value
 * fails before anything is sent, with a message naming the flag's expectation.
 */
import { InvalidArgumentError } from 'commander';

/** Parses a finite number ≥ `min` (and ≤ `max`). */
export function numberIn(min: number, max = Number.POSITIVE_INFINITY): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `expected a number${max === Number.POSITIVE_INFINITY ? ` >= ${min}` : ` in [${min}, ${max}]`}, got "${value}".`,
      );
    }
    return n;
  };
}

/** Parses an integer ≥ `min`. */
export function integerAtLeast(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`expected an integer >= ${min}, got "${value}".`);
    }
    return n;
  };
}

/** A strictly positive number. */
export const positiveNumber = (value: string): number => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError(`expected a number > 0, got "${value}".`);
  }
  return n;
};

/** Parses a JSON-ish scalar: `true`, `12`, `"x"`, `{...}`; anything else stays a string. */
function scalar(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * Accumulates `--extra-inputs` values: `key:value` pairs (value parsed as JSON when it is JSON,
 * e.g. `ignore_eos:true`, `min_tokens:100`) or a whole JSON object.
 */
export function collectExtraInputs(
  value: string,
  previous: Record<string, unknown> = {},
): Record<string, unknown> {
  const trimmed = value.trim();
  if (trimmed.startsWith('{')) {
    let obj: unknown;
    try {
      obj = JSON.parse(trimmed);
    } catch (err) {
      throw new InvalidArgumentError(`not valid JSON: ${(err as Error).message}`);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      throw new InvalidArgumentError('expected a JSON object or key:value.');
    }
    return { ...previous, ...(obj as Record<string, unknown>) };
  }
  const idx = trimmed.indexOf(':');
  if (idx <= 0) throw new InvalidArgumentError(`expected key:value or a JSON object, got "${value}".`);
  return { ...previous, [trimmed.slice(0, idx).trim()]: scalar(trimmed.slice(idx + 1).trim()) };
}

/** True when `text` has a control character other than tab (code points 0–31 and 127). */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 32 && c !== 9) || c === 127) return true;
  }
  return false;
}

/** Accumulates `-H "Name: value"` headers. */
export function collectHeaders(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const idx = value.indexOf(':');
  if (idx <= 0) throw new InvalidArgumentError(`expected "Name:Value", got "${value}".`);
  const name = value.slice(0, idx).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
    throw new InvalidArgumentError(`invalid header name "${name}".`);
  const headerValue = value.slice(idx + 1).trim();
  // RFC 9110 §5.5: field values carry no CR, LF, NUL or other control characters (tab allowed).
  if (hasControlCharacter(headerValue)) {
    throw new InvalidArgumentError(`header "${name}" has a control character (newline?) in its value.`);
  }
  return { ...previous, [name]: headerValue };
}

/**
 * Normalizes `--url` to `scheme://host:port[/base-path]` without a trailing slash; `http://` is
 * implied when no scheme is given (AIPerf behaviour).
 */
export function parseUrl(value: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new InvalidArgumentError(`not a URL: "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError(`only http:// and https:// are supported, got "${url.protocol}".`);
  }
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path}`;
}

/** Parses a comma-separated list of model names. */
export function parseModels(value: string): string[] {
  const models = value
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (models.length === 0) throw new InvalidArgumentError('expected at least one model name.');
  return models;
}

/** A choice among `allowed`. */
export function oneOf<T extends string>(allowed: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`expected one of ${allowed.join(', ')}, got "${value}".`);
    }
    return value as T;
  };
}

/**
 * Accumulates `--simulator-option name=value`: `ttft-ms=20` or `ttftMs=20`; values parsed as JSON
 * when they are JSON (`20`, `true`, `["a"]`), else kept as strings. Validated against the simulator's
 * schema when the run is resolved.
 */
export function collectSimulatorOption(
  value: string,
  previous: Record<string, unknown> = {},
): Record<string, unknown> {
  const idx = value.indexOf('=');
  if (idx <= 0) throw new InvalidArgumentError(`expected name=value, got "${value}".`);
  const name = value
    .slice(0, idx)
    .trim()
    .replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  return { ...previous, [name]: scalar(value.slice(idx + 1).trim()) };
}

/** A camelCase option name in the kebab-case a user types: `ttftMs` → `ttft-ms`. */
export function kebab(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}
