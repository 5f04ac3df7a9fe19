/**
 * Downloads a model's tokenizer files from the Hugging Face Hub into the local Hub cache
 * (prompt/hf-cache.ts), file by file through the Hub's resolve protocol (prompt/hf-resolve.ts).
 * Every answer is checked before anything is written: its names (commit, blob) and its content
 * (`tokenizer.json` must be what `loadTokenizer` reads), so a wrong answer (an HTML page, a
 * truncated file, a name leading out of the cache) never poisons the cache for later offline runs.
 *
 * Endpoint: `HF_ENDPOINT`, default `https://huggingface.co`. Token: `HF_TOKEN`, else the file
 * `huggingface-cli login` writes (`HF_TOKEN_PATH`, default `<HF_HOME>/token`). Proxies:
 * `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`. The token is sent only to the endpoint, never logged
 * or written to an artifact.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Dispatcher, EnvHttpProxyAgent } from 'undici';
import { type HubEnv, hfHome, writeCachedFile, writeCachedRef, writeMissingMark } from './hf-cache.js';
import { fetchFile } from './hf-resolve.js';
import { TokenizerLoadError, tokenizerJsonProblem } from './tokenizer.js';

/** The public Hub, used when `HF_ENDPOINT` is not set. */
export const DEFAULT_HF_ENDPOINT = 'https://huggingface.co';

/** The file a tokenizer cannot do without. */
export const TOKENIZER_FILE = 'tokenizer.json';

/** Files downloaded when the repository has them (special tokens, chat template). */
export const OPTIONAL_TOKENIZER_FILES = ['tokenizer_config.json', 'chat_template.jinja'] as const;

/**
 * `HF_ENDPOINT` without a trailing slash, or the public Hub.
 * @throws {TokenizerLoadError} naming `HF_ENDPOINT` when it is not an http(s) URL.
 */
export function hubEndpoint(env: HubEnv): string {
  const v = env.HF_ENDPOINT;
  if (v === undefined || v === '') return DEFAULT_HF_ENDPOINT;
  let url: URL | null = null;
  try {
    url = new URL(v);
  } catch {
    // reported below
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '')
    throw new TokenizerLoadError(
      `HF_ENDPOINT=${JSON.stringify(v)} is not an http(s) URL of a Hugging Face Hub (such as ${DEFAULT_HF_ENDPOINT}): set it to one, or unset it for the public Hub`,
    );
  return v.replace(/\/+$/, '');
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
  /** The run's stop signal (Ctrl-C): aborts the download at once. */
  signal?: AbortSignal;
}

/** The outcome of a download: the snapshot folder, or the URL that failed and why. */
export type HubResult =
  | { ok: true; snapshotDir: string; commit: string }
  | { ok: false; url: string; reason: string };

/** The files of one download, checked, before anything is written. */
interface Downloaded {
  commit: string;
  files: Array<{ file: string; etag: string; content: Uint8Array }>;
  /** Files the repository does not have (404 at the commit). */
  missing: string[];
}

/**
 * Downloads `tokenizer.json` of `d.repo` at `d.revision`, then the optional files at the commit it
 * resolved to; checks every answer (headers and content: {@link fetchFile}, {@link contentProblem});
 * only then writes them into the cache and `refs/<revision>`. A file the repository does not have
 * (404) is marked in `.no_exist` and skipped, unless it is `tokenizer.json`. A refused answer leaves
 * the cache as it was.
 * @returns the snapshot folder, or the URL that failed and why (an HTTP or network failure, an
 *   answer refused).
 * @throws {InterruptedError} when `d.signal` aborts; the file system error of a cache folder that
 *   cannot be written.
 */
export async function downloadTokenizer(d: HubDownload): Promise<HubResult> {
  // One connection per file (a handful per download): a kept-alive connection the server has just
  // closed would fail the next file's GET with "other side closed", which a download must not risk.
  const agent = new EnvHttpProxyAgent({ pipelining: 0 });
  try {
    const got = await downloadAll(agent, d);
    if (!got.ok) return got;
    const write = { repo: d.repo, commit: got.commit };
    const pointers = [];
    for (const f of got.files) pointers.push(await writeCachedFile(d.cacheDir, { ...write, ...f }));
    for (const file of got.missing) await writeMissingMark(d.cacheDir, d.repo, got.commit, file);
    await writeCachedRef(d.cacheDir, d.repo, d.revision, got.commit);
    return { ok: true, snapshotDir: dirname(pointers[0] as string), commit: got.commit };
  } finally {
    await (d.signal?.aborted === true ? agent.destroy() : agent.close());
  }
}

/** Every file of a download, checked, in memory. */
async function downloadAll(
  agent: Dispatcher,
  d: HubDownload,
): Promise<({ ok: true } & Downloaded) | { ok: false; url: string; reason: string }> {
  const ask = (url: string) => fetchFile({ agent, url, token: d.token, signal: d.signal });
  const mainUrl = resolveUrl(d.endpoint, d.repo, d.revision, TOKENIZER_FILE);
  const main = await ask(mainUrl);
  if (!main.ok) return { ok: false, url: mainUrl, reason: main.reason };
  const mainProblem = contentProblem(TOKENIZER_FILE, main.content);
  if (mainProblem !== null) return { ok: false, url: mainUrl, reason: refused(mainProblem) };
  const out: Downloaded = { commit: main.commit, files: [{ file: TOKENIZER_FILE, ...main }], missing: [] };
  for (const file of OPTIONAL_TOKENIZER_FILES) {
    const url = resolveUrl(d.endpoint, d.repo, main.commit, file);
    const got = await ask(url);
    if (!got.ok && got.status === 404) out.missing.push(file);
    else if (!got.ok) return { ok: false, url, reason: got.reason };
    else {
      const problem = contentProblem(file, got.content);
      if (problem !== null) return { ok: false, url, reason: refused(problem) };
      out.files.push({ file, etag: got.etag, content: got.content });
    }
  }
  return { ok: true, ...out };
}

function refused(problem: string): string {
  return `the answer ${problem}; nothing was stored in the Hugging Face cache`;
}

/** Characters of a refused body quoted in a message. */
const HEAD_CHARS = 60;

/**
 * What makes `content` unusable as the repository file `file`, as a predicate (`is not JSON (…)`),
 * or null: `tokenizer.json` and `tokenizer_config.json` must be what `loadTokenizer` reads
 * ({@link tokenizerJsonProblem}); `chat_template.jinja` UTF-8 text.
 */
function contentProblem(file: string, content: Uint8Array): string | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    return 'is not UTF-8 text';
  }
  if (!file.endsWith('.json')) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const head = text.length > HEAD_CHARS ? `${text.slice(0, HEAD_CHARS)}…` : text;
    return `is not JSON (${(err as Error).message}): it starts ${JSON.stringify(head)}`;
  }
  return tokenizerJsonProblem(file === TOKENIZER_FILE ? 'tokenizer' : 'config', value);
}
