/**
 * Value parsers for CLI flags. Each throws commander's `ConfigError`, so a bad value
 * fails before anything is sent, with a message naming the flag's expectation.
 */
import { ConfigError } from '../errors.js';
import { redactUrlPasswords } from './redact.js';

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
      throw new ConfigError(`not valid JSON: ${(err as Error).message}`);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      throw new ConfigError('expected a JSON object or key:value.');
    }
    return { ...previous, ...(obj as Record<string, unknown>) };
  }
  const idx = trimmed.indexOf(':');
  if (idx <= 0) throw new ConfigError(`expected key:value or a JSON object, got "${value}".`);
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

/**
 * Header names a run sets itself on every measured request (lower case): `--session-header` may not
 * name one. `x-correlation-id` and `x-session-affinity` are not here: they already carry the session
 * id, so naming one changes nothing.
 */
export const OWNED_HEADER_NAMES: readonly string[] = [
  'accept',
  'authorization',
  'connection',
  'content-length',
  'content-type',
  'host',
  'transfer-encoding',
  'user-agent',
  'x-api-key',
  'x-request-id',
];

/**
 * Header names the HTTP client (undici 7) refuses to send, throwing when the request is built:
 * `expect`, `keep-alive`, `transfer-encoding`, `upgrade`. Refused at start-up, never sent: a pool
 * whose request threw at dispatch stops dispatching on a one-connection pool (seen with undici
 * 7.30), so a run would hang at its second request.
 */
export const UNSENDABLE_HEADER_NAMES: readonly string[] = [
  'expect',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
];

/**
 * Hop-by-hop header names (RFC 9110 §7.6.1 names `Connection` and those it lists; `Proxy-Connection`,
 * `Keep-Alive`, `TE`, `Transfer-Encoding` and `Upgrade` are the usual ones): a proxy or router
 * removes them, so none can carry a session id to the router that needs it.
 */
const HOP_BY_HOP_HEADER_NAMES: readonly string[] = [
  'connection',
  'proxy-connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

/**
 * Accumulates `--session-header NAME` values: header names that carry each request's session id,
 * lower-cased, repeats dropped.
 * @throws {ConfigError} for a name that is not an HTTP token (RFC 9110 §5.1), one a run sets
 *   itself ({@link OWNED_HEADER_NAMES}), a hop-by-hop header or one the HTTP client does not send
 *   ({@link UNSENDABLE_HEADER_NAMES}).
 */
export function collectSessionHeaders(value: string, previous: readonly string[] = []): string[] {
  const name = value.trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
    throw new ConfigError(
      `--session-header: invalid header name "${name}" (an HTTP token: letters, digits and !#$%&'*+.^_\`|~-).`,
    );
  const lower = name.toLowerCase();
  if (OWNED_HEADER_NAMES.includes(lower))
    throw new ConfigError(
      `--session-header: "${name}" is a header tokenload sets itself on every request; name another header.`,
    );
  if (HOP_BY_HOP_HEADER_NAMES.includes(lower) || UNSENDABLE_HEADER_NAMES.includes(lower))
    throw new ConfigError(
      `--session-header: "${name}" cannot carry a session id: ${UNSENDABLE_HEADER_NAMES.includes(lower) ? 'the HTTP client does not send it' : 'it is a hop-by-hop header (RFC 9110 §7.6.1), which a proxy or router removes'}; name another header (X-Session-ID, X-Route-Key, …).`,
    );
  return previous.includes(lower) ? [...previous] : [...previous, lower];
}

/**
 * The problem of a `--session-header` name that `-H` also sets (any case): two values for one
 * header. Null when they name different headers.
 */
export function sessionHeaderClash(
  headers: Record<string, string>,
  sessionHeaders: readonly string[],
): string | null {
  const named = Object.keys(headers).find((h) => sessionHeaders.includes(h.toLowerCase()));
  return named === undefined
    ? null
    : `--session-header ${named} and -H ${named}:… both set that header: the session header carries the session id; drop one of them.`;
}

/**
 * Accumulates `-H "Name: value"` headers.
 * @throws {ConfigError} for a name that is not an HTTP token, one the HTTP client does not send
 *   ({@link UNSENDABLE_HEADER_NAMES}) or `Content-Length`, a Connection value that is not a token
 *   list, or a control character in a value.
 */
export function collectHeaders(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const idx = value.indexOf(':');
  if (idx <= 0) throw new ConfigError(`expected "Name:Value", got "${value}".`);
  const name = value.slice(0, idx).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new ConfigError(`invalid header name "${name}".`);
  const lower = name.toLowerCase();
  if (UNSENDABLE_HEADER_NAMES.includes(lower))
    throw new ConfigError(
      `header "${name}": the HTTP client does not send it (it manages the connection itself); leave it out.`,
    );
  if (lower === 'content-length')
    throw new ConfigError(`header "${name}": tokenload sets Content-Length from each body; leave it out.`);
  const headerValue = value.slice(idx + 1).trim();
  if (
    lower === 'connection' &&
    !headerValue.split(',').every((t) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(t.trim()))
  )
    throw new ConfigError(
      `header "${name}: ${headerValue}": a Connection value is a comma-separated list of tokens (e.g. close).`,
    );
  // RFC 9110 §5.5: field values carry no CR, LF, NUL or other control characters (tab allowed).
  if (hasControlCharacter(headerValue)) {
    throw new ConfigError(`header "${name}" has a control character (newline?) in its value.`);
  }
  return { ...previous, [name]: headerValue };
}

/**
 * Normalizes `--url` to `scheme://host:port[/base-path][?query]` without a trailing slash; `http://`
 * is implied when no scheme is given (AIPerf behaviour). The query (`?api-version=…`) goes with every
 * request (endpoint/types.ts `requestPathFor`).
 * @throws {ConfigError} for text that is not an http(s) URL, a URL with credentials (`user:pw@`,
 *   which HTTP clients do not send: the message says where they go instead, and does not repeat
 *   them), or a `#fragment` (never sent).
 */
export function parseUrl(value: string): string {
  // `htp:/host`, `http:/host`: a scheme with one slash would read as host `htp`, path `/host`.
  if (/^[a-z][a-z0-9+.-]*:\/(?!\/)/i.test(value))
    throw new ConfigError(
      `not a URL: "${redactUrlPasswords(value, true)}" (a scheme needs "://": http://host:port).`,
    );
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ConfigError(`not a URL: "${redactUrlPasswords(value, true)}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`only http:// and https:// are supported, got "${url.protocol}".`);
  }
  if (url.username !== '' || url.password !== '')
    throw new ConfigError(
      `a URL's user:password@ is not sent to the server; put credentials in --api-key or -H 'Authorization: …'.`,
    );
  if (url.hash !== '')
    throw new ConfigError(`a URL's #fragment is never sent to the server: drop "${url.hash}".`);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path}${url.search}`;
}

/**
 * Accumulates `--url` values: each a URL or a comma-separated list of them (AIPerf's `--url` is
 * repeatable), normalized by {@link parseUrl}, appended to `previous` in the order given.
 * @throws {ConfigError} for a value that is not an http(s) URL, an empty item, or a server listed twice
 *   (requests are spread evenly over the list: a repeat would silently send it twice the share).
 */
export function collectUrls(value: string, previous: readonly string[] = []): string[] {
  const out = [...previous];
  for (const item of value.split(',').map((s) => s.trim())) {
    if (item === '')
      throw new ConfigError(`expected a URL or a comma-separated list of URLs, got "${value}".`);
    const url = parseUrl(item);
    if (out.includes(url)) throw new ConfigError(`${url} is listed twice.`);
    out.push(url);
  }
  return out;
}

/** Parses a comma-separated list of model names. */
export function parseModels(value: string): string[] {
  const models = value
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (models.length === 0) throw new ConfigError('expected at least one model name.');
  return models;
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
  if (idx <= 0) throw new ConfigError(`expected name=value, got "${value}".`);
  return { ...previous, [camel(value.slice(0, idx).trim())]: scalar(value.slice(idx + 1).trim()) };
}

/** A kebab-case or snake_case name as the camelCase field it names: `ttft-ms`, `ttft_ms` → `ttftMs`. */
export function camel(name: string): string {
  return name.replace(/[-_]([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** An object's keys in camelCase (see {@link camel}); values unchanged. */
export function camelKeys(obj: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [camel(k), v]));
}

/**
 * A camelCase, snake_case or `--flag` name in the kebab-case a user types: `ttftMs` → `ttft-ms`,
 * `request_rate` → `request-rate` (config-file keys; flags themselves are declared in the schemas).
 */
export function kebab(name: string): string {
  return name
    .replace(/^--/, '')
    .replaceAll('_', '-')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}
