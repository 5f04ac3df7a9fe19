/**
 * Where a run's tokenizer comes from, resolved as the Hugging Face libraries resolve a name:
 * 1. `builtin` (or `builtin:qwen3`): the bundled Qwen3 vocabulary;
 * 2. a local path: a model folder with `tokenizer.json`, or a `tokenizer.json` file;
 * 3. the local Hub cache (prompt/hf-cache.ts): `models--ORG--NAME/snapshots/<commit>/` through
 *    `refs/<revision>`;
 * 4. a Qwen3 model name (`Qwen/Qwen3-8B`, `Qwen3-0.6B`, …) not in the cache: the bundled vocabulary,
 *    which is Qwen3's, without asking the Hub;
 * 5. a download from the Hub into that cache (prompt/hf-download.ts), unless `HF_HUB_OFFLINE` is set.
 * When none works the run fails before sending anything, with every path and URL it tried.
 */
import { existsSync } from 'node:fs';
import { InterruptedError, TokenloadError } from '../errors.js';
import { findCachedSnapshot, type HubEnv, hubCacheDir, isCommitHash, revisionProblem } from './hf-cache.js';
import {
  downloadTokenizer,
  hubEndpoint,
  hubOffline,
  hubToken,
  resolveUrl,
  TOKENIZER_FILE,
} from './hf-download.js';
import { BUILTIN_TOKENIZER, resolveFiles, TokenizerLoadError } from './tokenizer.js';

/** Where a tokenizer was found. */
export type TokenizerOrigin = 'builtin' | 'local' | 'cache' | 'hub';

/** A resolved tokenizer: what `loadTokenizer` takes, and where it came from (the summary's `tokenizer`). */
export interface TokenizerSource {
  /** The name asked for: `--tokenizer`, or the `--model` name when it is not given. */
  requested: string;
  origin: TokenizerOrigin;
  /** `builtin:qwen3`, or the folder / tokenizer.json path to load. */
  path: string;
  /** Hub repository id, for `cache` and `hub`. */
  repo?: string;
  /** Revision asked for (`--tokenizer-revision`), for `cache` and `hub`. */
  revision?: string;
  /** Commit the revision resolved to, for `cache` and `hub`. */
  commit?: string;
  /** Why the bundled vocabulary was used, for `builtin`. */
  reason?: string;
}

/** How to resolve. */
export interface ResolveOptions {
  /** `--tokenizer-revision`: branch, tag or commit hash (default `main`). */
  revision: string;
  /** The environment read for `HF_*` variables (`process.env` in a run). */
  env: HubEnv;
  /** How the name is shown in messages, e.g. `--tokenizer org/name`. */
  label?: string;
  /** Aborts a download at once (the run's stop signal, Ctrl-C): {@link InterruptedError}. */
  signal?: AbortSignal;
  /** Where a download starting and a broken cache entry passed over are told. */
  log?: { info(message: string): void; warn(message: string): void };
  /**
   * True (the default) when the caller sends requests once the tokenizer is resolved: a failure then
   * says nothing was sent. False for the simulator, which sends nothing.
   */
  beforeSending?: boolean;
}

/** huggingface_hub's repository id rule: `name` or `org/name`, word characters, `-` and `.`. */
const REPO_ID = /^(?:[\w.-]+\/)?[\w.-]{1,96}$/;

/** True when `name` can be a Hub model repository id. */
export function isRepoId(name: string): boolean {
  return REPO_ID.test(name) && !name.includes('--') && !name.includes('..') && !name.endsWith('.git');
}

/** True for a Qwen3 model name: its last path part starts with `Qwen3-` or is `Qwen3` (any case). */
export function isQwen3Name(name: string): boolean {
  const last = name.split('/').pop() ?? '';
  return /^qwen3(?:-|$)/i.test(last);
}

/**
 * Resolves `spec` (see the module comment for the order).
 * @throws {TokenizerLoadError} naming every path and URL tried when none gave a tokenizer; the
 *   problem of a local path that exists but is not a tokenizer; a bad `--tokenizer-revision` or
 *   `HF_ENDPOINT`. {@link InterruptedError} when `opts.signal` aborts a download.
 */
export async function resolveTokenizerSource(spec: string, opts: ResolveOptions): Promise<TokenizerSource> {
  const label = opts.label ?? `--tokenizer ${spec}`;
  const said = { label, beforeSending: opts.beforeSending ?? true };
  if (spec === BUILTIN_TOKENIZER || spec === 'builtin') {
    return { requested: spec, origin: 'builtin', path: BUILTIN_TOKENIZER, reason: '--tokenizer builtin' };
  }
  if (existsSync(spec)) {
    resolveFiles(spec);
    return { requested: spec, origin: 'local', path: spec };
  }
  const tried = [`local path ${spec}: no such file or folder`];
  if (!isRepoId(spec)) throw notFound(said, tried, false);
  checkRevision(label, opts.revision);
  const cacheDir = hubCacheDir(opts.env);
  const hub = { requested: spec, repo: spec, revision: opts.revision };
  const cached = findCachedSnapshot(cacheDir, spec, opts.revision, TOKENIZER_FILE);
  if (cached.found) return { ...hub, origin: 'cache', path: cached.snapshotDir, commit: cached.commit };
  const cacheMiss = `Hugging Face cache ${cached.tried}: ${cached.reason}`;
  tried.push(cacheMiss);
  // Told when the run goes on without it (the errors below list it already).
  const passOver = () => cached.broken && opts.log?.warn(`${label}: passed over the broken ${cacheMiss}`);
  if (isQwen3Name(spec)) {
    passOver();
    const reason = `${spec} is a Qwen3 model name, not in the Hugging Face cache`;
    return { requested: spec, origin: 'builtin', path: BUILTIN_TOKENIZER, reason };
  }
  const endpoint = hubEndpoint(opts.env);
  const url = resolveUrl(endpoint, spec, opts.revision, TOKENIZER_FILE);
  if (hubOffline(opts.env)) {
    tried.push(`Hugging Face Hub ${url}: not asked (HF_HUB_OFFLINE is set)`);
    throw notFound(said, tried, true);
  }
  passOver();
  opts.log?.info(`tokenizer: downloading ${url} into the Hugging Face cache ${cacheDir}`);
  const download = { repo: spec, revision: opts.revision, endpoint, cacheDir, token: hubToken(opts.env) };
  const got = await downloadOrThrow(said, { ...download, ...(opts.signal ? { signal: opts.signal } : {}) });
  if (got.ok) return { ...hub, origin: 'hub', path: got.snapshotDir, commit: got.commit };
  tried.push(`Hugging Face Hub ${got.url}: ${got.reason}`);
  throw notFound(said, tried, true);
}

/** How a resolution names itself in its errors. */
interface Said {
  label: string;
  beforeSending: boolean;
}

/** `; nothing was sent` when the caller sends requests, else nothing. */
function nothingSent(said: Said): string {
  return said.beforeSending ? '; nothing was sent' : '';
}

/** @throws {TokenizerLoadError} naming `--tokenizer-revision` when no ref file can have `revision`. */
function checkRevision(label: string, revision: string): void {
  const problem = isCommitHash(revision) ? null : revisionProblem(revision);
  if (problem !== null)
    throw new TokenizerLoadError(`${label}: --tokenizer-revision ${JSON.stringify(revision)} ${problem}`);
}

/**
 * {@link downloadTokenizer}, its errors named after the tokenizer: an interrupt stays an
 * {@link InterruptedError}, a refused cache path a {@link TokenizerLoadError}, and a cache folder
 * that cannot be written becomes one.
 */
async function downloadOrThrow(said: Said, d: Parameters<typeof downloadTokenizer>[0]) {
  try {
    return await downloadTokenizer(d);
  } catch (err) {
    const message = (err as Error).message;
    if (err instanceof InterruptedError)
      throw new InterruptedError(`${said.label}: ${message}${nothingSent(said)}`, { cause: err });
    if (err instanceof TokenloadError)
      throw new TokenizerLoadError(`${said.label}: ${message}${nothingSent(said)}`, { cause: err });
    throw new TokenizerLoadError(
      `${said.label}: cannot write the Hugging Face cache ${d.cacheDir} (${message}); set HF_HUB_CACHE or HF_HOME to a writable folder`,
      { cause: err },
    );
  }
}

function notFound(said: Said, tried: string[], repoLike: boolean): TokenizerLoadError {
  const fixes = [
    'give --tokenizer a model folder with tokenizer.json (or a tokenizer.json path)',
    ...(repoLike
      ? [
          'put the tokenizer in the Hugging Face cache (e.g. `hf download <repo> tokenizer.json tokenizer_config.json`)',
        ]
      : []),
    "or pass --tokenizer builtin to count with the bundled Qwen3 vocabulary (counts then differ from the served model's)",
  ];
  return new TokenizerLoadError(
    `${said.label}: no tokenizer found${nothingSent(said)}. Tried:\n${tried.map((t) => `  - ${t}`).join('\n')}\nTo fix: ${fixes.join('; ')}.`,
  );
}

/** The summary's `tokenizer` section (snake_case; absent fields are null). */
export interface TokenizerSection {
  requested: string;
  /** `builtin`, `local`, `cache` or `hub`. */
  source: TokenizerOrigin;
  path: string;
  repo: string | null;
  revision: string | null;
  commit: string | null;
  /** Why the bundled vocabulary was used; null for the others. */
  reason: string | null;
  /** The chat template file rendered on the client (`--apply-chat-template`); null without it. */
  chat_template: string | null;
}

/** {@link TokenizerSection} of `s`, with the client-side chat template's file when one was applied. */
export function tokenizerSection(s: TokenizerSource, chatTemplate: string | null): TokenizerSection {
  return {
    requested: s.requested,
    source: s.origin,
    path: s.path,
    repo: s.repo ?? null,
    revision: s.revision ?? null,
    commit: s.commit ?? null,
    reason: s.reason ?? null,
    chat_template: chatTemplate,
  };
}

/**
 * Where the tokenizer came from, in words, e.g. `org/name from the Hugging Face cache
 * /…/snapshots/abc (main = abc)`, or `the bundled Qwen3 vocabulary (--tokenizer builtin)`.
 */
export function describeTokenizer(t: TokenizerSection): string {
  const at =
    t.commit === null ? '' : t.revision === t.commit ? ` (${t.commit})` : ` (${t.revision} = ${t.commit})`;
  switch (t.source) {
    case 'builtin':
      return `the bundled Qwen3 vocabulary (${t.reason ?? t.requested})`;
    case 'local':
      return `${t.path} (local)`;
    case 'cache':
      return `${t.repo} from the Hugging Face cache ${t.path}${at}`;
    case 'hub':
      return `${t.repo} downloaded from the Hugging Face Hub into the cache ${t.path}${at}`;
  }
}
