/**
 * The response headers the client reads (`content-type`, `retry-after`, and `keep-alive` for the
 * connection's idle timeout), taken from
 * undici's raw header list (`[name, value, name, value, …]` as Buffers) exactly as undici's own
 * `parseHeaders` would give them: names compared lower-cased, values decoded as latin1, a repeated
 * header as an array of its values. Every other header is skipped without being decoded.
 */

/** The headers of a response that matter to a record, keyed by lower-case name. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

const WANTED = ['content-type', 'retry-after', 'keep-alive'];

function wantedName(name: Buffer | string): string | undefined {
  const length = name.length;
  for (const wanted of WANTED) {
    if (wanted.length !== length) continue;
    const text = typeof name === 'string' ? name : name.toString('latin1');
    const lower = text.toLowerCase();
    if (lower === wanted) return wanted;
  }
  return undefined;
}

/**
 * Picks `content-type`, `retry-after` and `keep-alive` out of raw headers.
 * @param raw alternating names and values (Buffers, or strings)
 */
export function responseHeaders(raw: ReadonlyArray<Buffer | string>): ResponseHeaders {
  const out: ResponseHeaders = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = wantedName(raw[i] as Buffer | string);
    if (name === undefined) continue;
    const item = raw[i + 1] as Buffer | string;
    const value = typeof item === 'string' ? item : item.toString('latin1');
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (typeof seen === 'string') out[name] = [seen, value];
    else seen.push(value);
  }
  return out;
}
