/**
 * One file of the Hugging Face Hub's file protocol, as `huggingface_hub` asks for it:
 * `GET <endpoint>/<repo>/resolve/<revision>/<file>`, the answer (or the redirect it starts with)
 * carrying `X-Repo-Commit` (the commit the revision points to) and `X-Linked-Etag` / `ETag` (the
 * blob's name). Redirects are followed by hand, and the `Authorization` header is dropped when one
 * leaves the endpoint's origin (a CDN or storage host must not receive the token). The server's
 * names are checked before anything uses them as file names: the commit must be 40 hex digits, the
 * blob name a hash-like token (prompt/hf-cache.ts).
 */
import { type Dispatcher, request } from 'undici';
import { InterruptedError } from '../errors.js';
import { packageVersion } from '../util/package-root.js';
import { isBlobName, isCommitHash } from './hf-cache.js';

/** Redirects followed per file before giving up. */
const MAX_REDIRECTS = 5;
/** Time limits of one HTTP exchange, ms. */
const HEADERS_TIMEOUT_MS = 30_000;
const BODY_TIMEOUT_MS = 120_000;

/** One file to fetch. */
export interface FileRequest {
  agent: Dispatcher;
  /** The resolve URL ({@link resolveUrl} of hf-download.ts). */
  url: string;
  /** Sent only to the URL's origin. */
  token: string | undefined;
  /** Aborts the exchange at once (the run's stop signal). */
  signal?: AbortSignal | undefined;
}

/** A file as one resolve exchange gave it: content and checked names, or why it failed. */
export type Fetched =
  | { ok: true; commit: string; etag: string; content: Uint8Array }
  | { ok: false; status: number | null; reason: string };

/** The Hub's names of a file, from the answer carrying `X-Repo-Commit`. */
interface HubNames {
  commit: string;
  etag: string | undefined;
  /** The header the blob name came from (`X-Linked-Etag` or `ETag`). */
  etagHeader: string;
}

/**
 * Fetches one file through its redirects.
 * @returns its content and names, or why it failed (a status, a network error, an answer refused);
 *   never throws for those.
 * @throws {InterruptedError} when `r.signal` aborts.
 */
export async function fetchFile(r: FileRequest): Promise<Fetched> {
  const origin = new URL(r.url).origin;
  let at = r.url;
  let hub: HubNames | undefined;
  try {
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const res = await get(r, at, origin);
      hub ??= hubNames(res);
      const location = header(res, 'location');
      if (res.statusCode >= 300 && res.statusCode < 400 && location !== undefined) {
        await res.body.dump();
        at = new URL(location, at).href;
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        return { ok: false, status: res.statusCode, reason: statusReason(res, r.token) };
      }
      const content = new Uint8Array(await res.body.arrayBuffer());
      return withNames(hub, header(res, 'etag'), content);
    }
    return { ok: false, status: null, reason: `more than ${MAX_REDIRECTS} redirects` };
  } catch (err) {
    if (r.signal?.aborted === true)
      throw new InterruptedError(`interrupted (Ctrl-C or SIGTERM) while downloading ${at}`, { cause: err });
    const code = (err as { code?: string }).code ?? (err as Error).name;
    return { ok: false, status: null, reason: `${code}: ${(err as Error).message}` };
  }
}

/** The names of `res` when it carries `X-Repo-Commit`. */
function hubNames(res: Dispatcher.ResponseData): HubNames | undefined {
  const commit = header(res, 'x-repo-commit');
  if (commit === undefined) return undefined;
  const linked = header(res, 'x-linked-etag');
  if (linked !== undefined) return { commit, etag: linked, etagHeader: 'X-Linked-Etag' };
  return { commit, etag: header(res, 'etag'), etagHeader: 'ETag' };
}

/**
 * The file with its checked names (the blob name from the Hub's answer, else the final answer's
 * ETag), or the answer refused, naming the header at fault.
 */
function withNames(hub: HubNames | undefined, finalEtag: string | undefined, content: Uint8Array): Fetched {
  const raw = hub?.etag ?? finalEtag;
  if (hub === undefined || raw === undefined)
    return { ok: false, status: 200, reason: 'the answer has no X-Repo-Commit or ETag: not a Hub endpoint' };
  if (!isCommitHash(hub.commit))
    return refused(`X-Repo-Commit ${JSON.stringify(hub.commit)} is not a 40-hex-digit commit hash`);
  const etag = blobName(raw);
  const from = hub.etag === undefined ? 'ETag' : hub.etagHeader;
  if (!isBlobName(etag))
    return refused(
      `${from} ${JSON.stringify(raw)} is not a blob hash (letters, digits, '.', '_', '-'; no '/', '\\' or '..')`,
    );
  return { ok: true, commit: hub.commit, etag, content };
}

function refused(why: string): Fetched {
  return {
    ok: false,
    status: 200,
    reason: `answer refused: its ${why}; nothing was stored in the Hugging Face cache`,
  };
}

/** The blob name of an ETag: without the weak marker and the quotes. */
function blobName(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"|"$/g, '');
}

function header(res: Dispatcher.ResponseData, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** One GET, with `authorization` only when `url` is on the endpoint's origin. */
function get(r: FileRequest, url: string, origin: string): Promise<Dispatcher.ResponseData> {
  const headers: Record<string, string> = { 'user-agent': `tokenload/${packageVersion()}` };
  if (r.token !== undefined && new URL(url).origin === origin) headers.authorization = `Bearer ${r.token}`;
  return request(url, {
    method: 'GET',
    headers,
    dispatcher: r.agent,
    headersTimeout: HEADERS_TIMEOUT_MS,
    bodyTimeout: BODY_TIMEOUT_MS,
    ...(r.signal === undefined ? {} : { signal: r.signal }),
  });
}

/** Why an answer other than 200 failed, in the user's terms (the Hub's `X-Error-*` headers when sent). */
function statusReason(res: Dispatcher.ResponseData, token: string | undefined): string {
  const status = res.statusCode;
  const code = header(res, 'x-error-code');
  const message = header(res, 'x-error-message');
  const said = `HTTP ${status}${code === undefined ? '' : ` ${code}`}${message === undefined ? '' : `: ${message}`}`;
  if (status === 401)
    return token === undefined
      ? `${said} (a gated or private repository, or none by that name: set HF_TOKEN to a token that can read it)`
      : `${said} (the Hub refused the token: check HF_TOKEN)`;
  if (status === 403)
    return `${said} (the token cannot read this repository: for a gated model, accept its terms on the model's Hub page)`;
  if (status === 404) {
    if (code === 'EntryNotFound') return `${said} (the repository has no such file)`;
    if (code === 'RevisionNotFound') return `${said} (no such revision: check --tokenizer-revision)`;
    return `${said} (no such repository or revision)`;
  }
  return said;
}
