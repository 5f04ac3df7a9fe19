/**
 * The local Hugging Face Hub cache, read and written in the layout of the `huggingface_hub` Python
 * library, so a tokenizer one tool downloaded is found by the other:
 * `<cache>/models--ORG--NAME/refs/<revision>` holds the commit hash a branch or tag points to,
 * `snapshots/<commit>/<file>` is a relative symlink to `blobs/<etag>` (the file's content, named by
 * the Hub's ETag: the git blob hash, or the sha256 of a large file), and `.no_exist/<commit>/<file>`
 * marks a file the Hub said the repository does not have.
 *
 * The cache folder is `HF_HUB_CACHE`, else `HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`,
 * else `~/.cache/huggingface/hub` (huggingface_hub's order).
 */
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';

/** The environment variables this module and the Hub download read (a subset of `process.env`). */
export type HubEnv = Readonly<Record<string, string | undefined>>;

/** A 40-hex-digit git commit hash: a revision that names one snapshot directly. */
const COMMIT_HASH = /^[0-9a-f]{40}$/;

/** True when `revision` is a full commit hash. */
export function isCommitHash(revision: string): boolean {
  return COMMIT_HASH.test(revision);
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
  | { found: false; tried: string; reason: string };

/**
 * The snapshot folder of `repo` at `revision` holding `requiredFile`: `refs/<revision>` gives the
 * commit (a commit-hash revision names it directly), and `snapshots/<commit>/<requiredFile>` must exist.
 */
export function findCachedSnapshot(
  cacheDir: string,
  repo: string,
  revision: string,
  requiredFile: string,
): CacheLookup {
  const repoDir = repoCacheDir(cacheDir, repo);
  let commit = revision;
  if (!isCommitHash(revision)) {
    const ref = join(repoDir, 'refs', revision);
    if (!existsSync(ref)) return { found: false, tried: ref, reason: 'no such file' };
    commit = readFileSync(ref, 'utf8').trim();
  }
  const snapshotDir = join(repoDir, 'snapshots', commit);
  const file = join(snapshotDir, requiredFile);
  if (!existsSync(file)) return { found: false, tried: file, reason: 'no such file' };
  return { found: true, snapshotDir, commit };
}

/** One downloaded file, as the cache stores it. */
export interface CachedFileWrite {
  repo: string;
  /** Commit the file was resolved at (the Hub's `X-Repo-Commit`). */
  commit: string;
  /** Path inside the repository, e.g. `tokenizer.json`. */
  file: string;
  /** Blob name: the Hub's ETag without quotes and weak marker. */
  etag: string;
  content: Uint8Array;
}

/**
 * Stores a downloaded file: the blob (written to `<etag>.incomplete`, then renamed), and the snapshot
 * entry pointing at it (a relative symlink; a copy where symlinks are refused).
 * @returns the snapshot path of the file.
 * @throws the file system error (a cache folder that cannot be written).
 */
export async function writeCachedFile(cacheDir: string, w: CachedFileWrite): Promise<string> {
  const repoDir = repoCacheDir(cacheDir, w.repo);
  const blob = join(repoDir, 'blobs', w.etag);
  const pointer = join(repoDir, 'snapshots', w.commit, w.file);
  await mkdir(dirname(blob), { recursive: true });
  await mkdir(dirname(pointer), { recursive: true });
  if (!existsSync(blob)) {
    const incomplete = `${blob}.incomplete`;
    await writeFile(incomplete, w.content);
    await rename(incomplete, blob);
  }
  await rm(pointer, { force: true });
  try {
    await symlink(relative(dirname(pointer), blob), pointer);
  } catch {
    await copyFile(blob, pointer);
  }
  return pointer;
}

/** Records that `revision` (a branch or tag) points to `commit`: `refs/<revision>`. */
export async function writeCachedRef(cacheDir: string, repo: string, revision: string, commit: string) {
  if (isCommitHash(revision)) return;
  const ref = join(repoCacheDir(cacheDir, repo), 'refs', revision);
  await mkdir(dirname(ref), { recursive: true });
  await writeFile(ref, commit);
}

/** Marks `file` as absent from `repo` at `commit` (`.no_exist/<commit>/<file>`, an empty file). */
export async function writeMissingMark(cacheDir: string, repo: string, commit: string, file: string) {
  const mark = join(repoCacheDir(cacheDir, repo), '.no_exist', commit, file);
  await mkdir(dirname(mark), { recursive: true });
  await writeFile(mark, '');
}
