/**
 * Request-body validation shared by every simulator route: the per-request client error, and the
 * JSON and field checks each route's parser starts from.
 */

/** A client error: HTTP status plus OpenAI-style message, param and code. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

/**
 * Parses a request body as a JSON object.
 * @throws {RequestError} 400 when it is not JSON, or not an object.
 */
export function parseJsonObject(raw: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new RequestError(400, 'request body is not valid JSON', null, 'invalid_request_error');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new RequestError(400, 'request body must be a JSON object', null, 'invalid_request_error');
  }
  return body as Record<string, unknown>;
}

/**
 * A positive integer field of `body`, or undefined when it is absent or null.
 * @throws {RequestError} 400 naming `key` when it is anything else.
 */
export function positiveIntField(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Number.isInteger(v) || (v as number) < 1) {
    throw new RequestError(400, `'${key}' must be a positive integer`, key, 'invalid_request_error');
  }
  return v as number;
}

/** True for a non-empty array of integers (token ids given instead of text). */
export function isTokenIds(v: unknown): v is number[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x));
}
