/**
 * Downloads a model's tokenizer files from the Hugging Face Hub into the local Hub cache
 * (prompt/hf-cache.ts), with the Hub's file protocol as `huggingface_hub` uses it:
 * `GET <endpoint>/<repo>/resolve/<revision>/<file>`, the answer (or the redirect it starts with)
 * carrying `X-Repo-Commit` (the commit the revision points to) and `X-Linked-Etag` / `ETag` (the
 * blob's name). Redirects are followed by hand, and the `Authorization` header is dropped when one
 * leaves the endpoint's origin (a CDN or storage host must not receive the token).
 *
 * Endpoint: `HF_ENDPOINT`, default `https://huggingface.co`. Token: `HF_TOKEN`, else the file
 * `huggingface-cli login` writes (`HF_TOKEN_PATH`, default `<HF_HOME>/token`). Proxies:
 * `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`. The token is sent only to the endpoint, never logged
 * or written to an artifact.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Dispatcher, EnvHttpProxyAgent, request } from 'undici';
import { packageVersion } from '../util/package-root.js';
import { type HubEnv, hfHome, writeCachedFile, writeCachedRef, writeMissingMark } from './hf-cache.js';

/** The public Hub, used when `HF_ENDPOINT` is not set. */
export const DEFAULT_HF_ENDPOINT = 'https://huggingface.co';

/** The file a tokenizer cannot do without. */
export const TOKENIZER_FILE = 'tokenizer.json';

/** Files downloaded when the repository has them (special tokens, chat template). */
export const OPTIONAL_TOKENIZER_FILES = ['tokenizer_config.json', 'chat_template.jinja'] as const;

/** Redirects followed per file before giving up. */
const MAX_REDIRECTS = 5;
/** Time limits of one HTTP exchange, ms. */
const HEADERS_TIMEOUT_MS = 30_000;
const BODY_TIMEOUT_MS = 120_000;

/** `HF_ENDPOINT` without a trailing slash, or the public Hub. */
export function hubEndpoint(env: HubEnv): string {
  const v = env.HF_ENDPOINT;
  return v === undefined || v === '' ? DEFAULT_HF_ENDPOINT : v.replace(/\/+$/, '');
}

/** True when `HF_HUB_OFFLINE` is 1, true, yes or on (any case): the Hub is not asked. */
export function hubOffline(env: HubEnv): boolean {
  return ['1', 'true', 'yes', 'on'].includes((env.HF_HUB_OFFLINE ?? '').trim().toLowerCase());
}

/** `HF_TOKEN`, else the token file of `huggingface-cli login`; undefined when neither is set. */
export function hubToken(env: HubEnv): string | undefined {
  const direct = env.HF_TOKEN?.trim();
  if (direct !== undefined && direct !== '') return direct;
  const path = env.HF_TOKEN_PATH || join(hfHome(env), 'token');
  if (!existsSync(path)) return undefined;
  const fromFile = readFileSync(path, 'utf8').trim();
  return fromFile === '' ? undefined : fromFile;
}

/** The resolve URL of `file` in `repo` at `revision`. */
export function resolveUrl(endpoint: string, repo: string, revision: string, file: string): string {
  return `${endpoint}/${repo}/resolve/${encodeURIComponent(revision)}/${file}`;
}

/** Where and how to download. */
export interface HubDownload {
  repo: string;
  revision: string;
  endpoint: string;
  cacheDir: string;
  token: string | undefined;
}

/** The outcome of a download: the snapshot folder, or the URL that failed and why. */
export type HubResult =
  | { ok: true; snapshotDir: string; commit: string }
  | { ok: false; url: string; reason: string };

/** A file as one resolve exchange gave it. */
type Fetched =
  | { ok: true; commit: string; etag: string; content: Uint8Array }
  | { ok: false; status: number | null; reason: string };

/**
 * Downloads `tokenizer.json` of `d.repo` at `d.revision`, then the optional files at the commit it
 * resolved to, into the cache; writes `refs/<revision>`. A file the repository does not have (404)
 * is marked in `.no_exist` and skipped, unless it is `tokenizer.json`.
 * Never throws for an HTTP or network failure (the result says what failed); a cache folder that
 * cannot be written throws its file system error.
 */
export async function downloadTokenizer(d: HubDownload): Promise<HubResult> {
  const agent = new EnvHttpProxyAgent();
  try {
    const mainUrl = resolveUrl(d.endpoint, d.repo, d.revision, TOKENIZER_FILE);
    const main = await fetchFile(agent, mainUrl, d.token);
    if (!main.ok) return { ok: false, url: mainUrl, reason: main.reason };
    const write = { repo: d.repo, commit: main.commit };
    const pointer = await writeCachedFile(d.cacheDir, { ...write, file: TOKENIZER_FILE, ...main });
    for (const file of OPTIONAL_TOKENIZER_FILES) {
      const url = resolveUrl(d.endpoint, d.repo, main.commit, file);
      const got = await fetchFile(agent, url, d.token);
      if (got.ok) await writeCachedFile(d.cacheDir, { ...write, file, ...got });
      else if (got.status === 404) await writeMissingMark(d.cacheDir, d.repo, main.commit, file);
      else return { ok: false, url, reason: got.reason };
    }
    await writeCachedRef(d.cacheDir, d.repo, d.revision, main.commit);
    return { ok: true, snapshotDir: join(pointer, '..'), commit: main.commit };
  } finally {
    await agent.close();
  }
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
async function get(
  agent: Dispatcher,
  url: string,
  origin: string,
  token: string | undefined,
): Promise<Dispatcher.ResponseData> {
  const headers: Record<string, string> = { 'user-agent': `tokenload/${packageVersion()}` };
  if (token !== undefined && new URL(url).origin === origin) headers.authorization = `Bearer ${token}`;
  return request(url, {
    method: 'GET',
    headers,
    dispatcher: agent,
    headersTimeout: HEADERS_TIMEOUT_MS,
    bodyTimeout: BODY_TIMEOUT_MS,
  });
}

/** Fetches one file through its redirects; the Hub's headers come from the answer carrying `X-Repo-Commit`. */
async function fetchFile(agent: Dispatcher, url: string, token: string | undefined): Promise<Fetched> {
  const origin = new URL(url).origin;
  let at = url;
  let hub: { commit: string; etag: string | undefined } | undefined;
  try {
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const res = await get(agent, at, origin, token);
      const commit = header(res, 'x-repo-commit');
      if (hub === undefined && commit !== undefined) {
        hub = { commit, etag: header(res, 'x-linked-etag') ?? header(res, 'etag') };
      }
      const location = header(res, 'location');
      if (res.statusCode >= 300 && res.statusCode < 400 && location !== undefined) {
        await res.body.dump();
        at = new URL(location, at).href;
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        return { ok: false, status: res.statusCode, reason: statusReason(res, token) };
      }
      const content = new Uint8Array(await res.body.arrayBuffer());
      const etag = hub?.etag ?? header(res, 'etag');
      if (hub === undefined || etag === undefined)
        return {
          ok: false,
          status: 200,
          reason: 'the answer has no X-Repo-Commit or ETag: not a Hub endpoint',
        };
      return { ok: true, commit: hub.commit, etag: blobName(etag), content };
    }
    return { ok: false, status: null, reason: `more than ${MAX_REDIRECTS} redirects` };
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).name;
    return { ok: false, status: null, reason: `${code}: ${(err as Error).message}` };
  }
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
