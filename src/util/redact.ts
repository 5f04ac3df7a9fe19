/**
 * Secret redaction for the `input_config` stored in the summary JSON, so an artifact directory can be
 * shared without leaking API keys or auth headers.
 */

/** Replacement text of a redacted value. */
export const REDACTED = '<redacted>';

/** Config keys whose whole value is secret. */
const SECRET_KEY = /api[-_]?key|authorization|auth[-_]?token|access[-_]?token|secret|password|passwd|cookie/i;
/** Header names whose value is secret (inside any `headers`-like key). */
const SECRET_HEADER = /auth|api[-_]?key|token|secret|cookie/i;

function redactHeaderLine(line: string): string {
  const sep = line.search(/[:=]/);
  if (sep <= 0) return line;
  const name = line.slice(0, sep);
  return SECRET_HEADER.test(name) ? `${name}${line[sep]}${REDACTED}` : line;
}

function redactHeaders(value: unknown): unknown {
  if (typeof value === 'string') return redactHeaderLine(value);
  if (Array.isArray(value)) return value.map(redactHeaders);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, SECRET_HEADER.test(k) ? REDACTED : redactConfig(v)]),
    );
  }
  return value;
}

/** The password of `scheme://user:password@host` anywhere in a text. */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:)[^\s/?#@]*@/gi;
/** The password of `user:password@host` at the start of a text or of a comma list item (no scheme). */
const BARE_URL_PASSWORD = /((?:^|,)\s*[^\s/?#@:,]+:)[^\s/?#@,]*@/g;

/**
 * `text` with the password of every URL in it (`http://user:password@host`) replaced by
 * `<redacted>`; with `schemeless`, also of a URL without a scheme (`user:pw@host:8000`, as `--url`
 * takes it) at the start of the text or of a comma list item.
 */
export function redactUrlPasswords(text: string, schemeless = false): string {
  const out = text.replace(URL_PASSWORD, `$1${REDACTED}@`);
  return schemeless ? out.replace(BARE_URL_PASSWORD, `$1${REDACTED}@`) : out;
}

/**
 * A deep copy of `value` with secrets replaced by `<redacted>`: values of keys such as `api_key`,
 * `authorization`, `password`; inside keys containing `header`, values of auth/key/token/cookie headers
 * (objects, or `Name:value` strings as given to `-H`); any string starting with `Bearer `; and the
 * password of any URL in a string ({@link redactUrlPasswords}). Does not modify `value`.
 */
export function redactConfig(value: unknown): unknown {
  if (typeof value === 'string') return /^bearer\s/i.test(value) ? REDACTED : redactUrlPasswords(value);
  if (Array.isArray(value)) return value.map(redactConfig);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (SECRET_KEY.test(key) && v !== null && v !== undefined) out[key] = REDACTED;
    else if (/header/i.test(key)) out[key] = redactHeaders(v);
    else out[key] = redactConfig(v);
  }
  return out;
}
