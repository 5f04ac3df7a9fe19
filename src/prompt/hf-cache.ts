/**
 * The local Hugging Face Hub cache, read and written in the layout of the `huggingface_hub` Python
 * library, so a tokenizer one tool downloaded is found by the other:
 * `<cache>/models--ORG--NAME/refs/<revision>` holds the commit hash a branch or tag points to,
 * `snapshots/<commit>/<file>` is a relative symlink to `blobs/<etag>` (the file's content, named by
 * the Hub's ETag: the git blob hash, or the sha256 of a large file), and `.no_exist/<commit>/<file>`
 * marks a file the Hub said the repository does not have. Names that come from the Hub, a ref file
 * or a flag (commit, blob, revision) are checked before they become path parts, and every path is
 * checked to stay inside its folder of the cache; files are written under a temporary name and
 * renamed into place.
 *
 * The cache folder is `HF_HUB_CACHE`, else `HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`,
 * else `~/.cache/huggingface/hub` (huggingface_hub's order).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { copyFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { makeDirs } from '../util/make-dir.js';
import { TokenizerLoadError } from './tokenizer.js';

/** The environment variables this module and the Hub download read (a subset of `process.env`). */
export type HubEnv = Readonly<Record<string, string | undefined>>;

/** A 40-hex-digit git commit hash: a revision that names one snapshot directly (huggingface_hub's rule). */
const COMMIT_HASH = /^[0-9a-f]{40}$/;

/** True when `revision` is a full commit hash. */
export function isCommitHash(revision: string): boolean {
  return COMMIT_HASH.test(revision);
}

/**
 * A blob name: a hash-like token (the Hub's ETags are the git blob sha1 or the sha256): letters,
 * digits, `.`, `_`, `-`, not starting with `.`, at most 200 characters, no `..`.
 */
const BLOB_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** True when `name` may name a file in `blobs/` (see {@link BLOB_NAME}). */
export function isBlobName(name: string): boolean {
  return BLOB_NAME.test(name) && !name.includes('..');
}

/**
 * Why `revision` cannot name a ref file under `refs/`, or null when it can. A branch or tag may hold
 * `/` (`refs/pr/1`, as huggingface_hub stores it: `refs/refs/pr/1`), but no empty, `.` or `..`
 * part, no leading `/`, backslash or control character: the ref file stays inside the repository's
 * folder.
 */
export function revisionProblem(revision: string): string | null {
  if (revision === '') return 'is empty';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\x00-\x1f\x7f]/.test(revision)) return 'holds a control character';
  if (revision.includes('\\')) return 'holds a backslash';
  if (revision.startsWith('/')) return 'is an absolute path';
  const parts = revision.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..'))
    return "has an empty, '.' or '..' part (a branch, tag or commit hash cannot)";
  return null;
}

/**
 * `root` (a folder of the cache) joined with `parts`, checked to stay inside `root`: a name from a
 * server, a file or a flag must not lead out of it.
 * @throws {TokenizerLoadError} naming `what` and the path when it leads outside `root`.
 */
function pathInside(root: string, what: string, ...parts: string[]): string {
  const path = join(root, ...parts);
  const rel = relative(resolve(root), resolve(path));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new TokenizerLoadError(
      `${what} leads outside the Hugging Face cache's folder ${root} (to ${path})`,
    );
  return path;
}

/** A variable's value, treating an empty string as unset (as huggingface_hub does). */
function envValue(env: HubEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** The Hub cache folder for `env` (see the module comment for the order). */
export function hubCacheDir(env: HubEnv): string {
  const explicit = envValue(env, 'HF_HUB_CACHE');
  if (explicit !== undefined) return explicit;
  return join(hfHome(env), 'hub');
}

/** `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`. */
export function hfHome(env: HubEnv): string {
  return (
    envValue(env, 'HF_HOME') ??
    join(envValue(env, 'XDG_CACHE_HOME') ?? join(homedir(), '.cache'), 'huggingface')
  );
}

/** The folder of model repository `repo` (`org/name`) in `cacheDir`: `models--org--name`. */
export function repoCacheDir(cacheDir: string, repo: string): string {
  return join(cacheDir, `models--${repo.split('/').join('--')}`);
}

/** What a cache lookup found, or why it found nothing usable. */
export type CacheLookup =
  | { found: true; snapshotDir: string; commit: string }
  /**
   * `tried`: the file looked for; `broken`: true when the cache holds something unusable there (a
   * ref file that is a folder, empty, or holds no commit hash), not merely nothing.
   */
  | { found: false; tried: string; reason: string; broken: boolean };

/** Longest part of a bad ref file quoted in a message, characters. */
const QUOTED_CHARS = 60;

/**
 * The commit hash `refs/<revision>` holds, or what is wrong with it (naming `--tokenizer-revision`).
 */
function readRef(ref: string, revision: string): { commit: string } | { reason: string; broken: boolean } {
  const flag = `--tokenizer-revision ${revision}`;
  const expected = `expected the 40-hex-digit commit hash ${flag} points to`;
  let text: string;
  try {
    if (statSync(ref).isDirectory()) return { reason: `a folder, not a file (${expected})`, broken: true };
    text = readFileSync(ref, 'utf8').trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { reason: 'no such file', broken: false };
    return { reason: `unreadable (${code ?? (err as Error).message}; ${expected})`, broken: true };
  }
  if (text === '') return { reason: `empty (${expected})`, broken: true };
  if (!isCommitHash(text)) {
    const shown = text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text;
    return { reason: `holds ${JSON.stringify(shown)} (${expected})`, broken: true };
  }
  return { commit: text };
}

/**
 * The snapshot folder of `repo` at `revision` holding `requiredFile`: `refs/<revision>` gives the
 * commit (a commit-hash revision names it directly), and `snapshots/<commit>/<requiredFile>` must
 * exist. Each reason names the file looked at, what it held and `--tokenizer-revision`.
 * @throws {TokenizerLoadError} for a revision whose ref file would be outside `refs/` (check
 *   {@link revisionProblem} first for a clearer message).
 */
export function findCachedSnapshot(
  cacheDir: string,
  repo: string,
  revision: string,
  requiredFile: string,
): CacheLookup {
  const repoDir = repoCacheDir(cacheDir, repo);
  let commit = revision;
  let via = '';
  if (!isCommitHash(revision)) {
    const ref = pathInside(join(repoDir, 'refs'), `--tokenizer-revision ${revision}`, revision);
    const read = readRef(ref, revision);
    if (!('commit' in read)) return { found: false, tried: ref, ...read };
    commit = read.commit;
    via = ` (${ref} holds ${commit}: the snapshot --tokenizer-revision ${revision} points to)`;
  }
  const snapshotDir = join(repoDir, 'snapshots', commit);
  const file = join(snapshotDir, requiredFile);
  if (!existsSync(file)) return { found: false, tried: file, reason: `no such file${via}`, broken: false };
  return { found: true, snapshotDir, commit };
}

/** One downloaded file, as the cache stores it. */
export interface CachedFileWrite {
  repo: string;
  /** Commit the file was resolved at (the Hub's `X-Repo-Commit`): 40 hex digits. */
  commit: string;
  /** Path inside the repository, e.g. `tokenizer.json`. */
  file: string;
  /** Blob name: the Hub's ETag without quotes and weak marker ({@link isBlobName}). */
  etag: string;
  content: Uint8Array;
}

/** A name beside `path` no other writer uses: `<path>.<pid>.<random>.<suffix>`. */
function tempBeside(path: string, suffix: string): string {
  return `${path}.${process.pid}.${randomUUID().slice(0, 8)}.${suffix}`;
}

/**
 * Stores a downloaded file: the blob (written to a temporary file in `blobs/`, then renamed), and
 * the snapshot entry pointing at it (a relative symlink, a copy where symlinks are refused, made
 * beside the entry and renamed over it). Every path is checked to stay inside the repository's folder.
 * @returns the snapshot path of the file.
 * @throws {TokenizerLoadError} for a commit that is not a hash, a blob name that is not one, or a
 *   path leading out of the cache; the file system error for a cache folder that cannot be written.
 */
export async function writeCachedFile(cacheDir: string, w: CachedFileWrite): Promise<string> {
  if (!isCommitHash(w.commit))
    throw new TokenizerLoadError(`commit ${JSON.stringify(w.commit)} is not a commit hash`);
  if (!isBlobName(w.etag)) throw new TokenizerLoadError(`blob name ${JSON.stringify(w.etag)} is not a hash`);
  const repoDir = repoCacheDir(cacheDir, w.repo);
  const blob = pathInside(join(repoDir, 'blobs'), `blob ${w.etag}`, w.etag);
  const pointer = pathInside(join(repoDir, 'snapshots'), `snapshot entry ${w.file}`, w.commit, w.file);
  await makeDirs(dirname(blob));
  await makeDirs(dirname(pointer));
  if (!existsSync(blob)) await replaceWith(blob, (tmp) => writeFile(tmp, w.content, { flag: 'wx' }));
  await replaceWith(pointer, async (tmp) => {
    try {
      await symlink(relative(dirname(pointer), blob), tmp);
    } catch {
      await copyFile(blob, tmp);
    }
  });
  return pointer;
}

/** Makes `path` by `make(tmp)` on a temporary name beside it, then one rename (atomic). */
async function replaceWith(path: string, make: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = tempBeside(path, 'incomplete');
  try {
    await make(tmp);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Records that `revision` (a branch or tag) points to `commit`: `refs/<revision>`. */
export async function writeCachedRef(cacheDir: string, repo: string, revision: string, commit: string) {
  if (isCommitHash(revision)) return;
  const refs = join(repoCacheDir(cacheDir, repo), 'refs');
  const ref = pathInside(refs, `--tokenizer-revision ${revision}`, revision);
  await makeDirs(dirname(ref));
  await replaceWith(ref, (tmp) => writeFile(tmp, commit, { flag: 'wx' }));
}

/** Marks `file` as absent from `repo` at `commit` (`.no_exist/<commit>/<file>`, an empty file). */
export async function writeMissingMark(cacheDir: string, repo: string, commit: string, file: string) {
  if (!isCommitHash(commit))
    throw new TokenizerLoadError(`commit ${JSON.stringify(commit)} is not a commit hash`);
  const marks = join(repoCacheDir(cacheDir, repo), '.no_exist');
  const mark = pathInside(marks, `missing-file mark ${file}`, commit, file);
  await makeDirs(dirname(mark));
  await writeFile(mark, '');
}
