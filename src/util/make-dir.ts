/**
 * Creating a folder the user named, and saying in words why a file system refused it. Node's
 * `mkdir(dir, { recursive: true })` is not used: on a read-only file system it reports ENOENT (it
 * looks the folder up after the refusal and reports that instead of EROFS), and under `/proc`, where
 * `mkdir` answers ENOENT although the parent exists, it retries forever on a thread-pool thread: a
 * busy core, and a process that no signal handler can finish.
 */
import { mkdir, open, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/**
 * A folder that could not be created or written, with the path that failed and why in words. A
 * system error still (`code`, `syscall`): callers that report system errors report it as one.
 */
export class DirError extends Error {
  override readonly name = 'DirError';
  /** The call the file system refused. */
  readonly syscall: string;
  constructor(
    /** What failed: creating the folder (or a parent), or writing a file in it. */
    readonly action: 'create' | 'write in',
    /** The path the file system refused (the folder, or a parent that could not be created). */
    readonly path: string,
    /** The system error code (`EROFS`, `ENOENT`, …). */
    readonly code: string,
    /** Why, in words ({@link fileSystemReason}), or the system's message. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot ${action} ${path}: ${reason} (${code})`, options);
    this.syscall = action === 'create' ? 'mkdir' : 'open';
  }

  /** `cannot create the folder (EROFS: the file system is read-only)`, naming `path` when it is not `dir`. */
  describe(dir: string): string {
    const where = resolve(dir) === this.path ? '' : ` at ${this.path}`;
    return `cannot ${this.action} the folder (${this.code}${where}: ${this.reason})`;
  }
}

/**
 * A file system's refusal in words a user acts on: read-only, no permission, full, a file in the
 * way. Null for another error (its own message says it).
 */
export function fileSystemReason(err: unknown): string | null {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EROFS':
      return 'the file system is read-only';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied: it cannot be written';
    case 'ENOSPC':
    case 'EDQUOT':
      return 'no space left on the device';
    case 'ENOTDIR':
    case 'EEXIST':
      return 'a file of that name is in the way';
    default:
      return null;
  }
}

/** ENOENT from `mkdir` or `open` in a folder that exists: a file system that holds no files of ours. */
const VIRTUAL_FS = 'the file system does not let files or folders be created there, as /proc and /sys do not';

/** The error of `path` refused by the file system; ENOENT is only asked of paths whose parent exists. */
function dirError(action: DirError['action'], path: string, err: unknown): DirError | Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return err as Error;
  const reason = code === 'ENOENT' ? VIRTUAL_FS : (fileSystemReason(err) ?? (err as Error).message);
  return new DirError(action, path, code, reason, { cause: err });
}

/** The folders of `dir` that do not exist yet, outermost first. @throws {DirError} for a file in the way. */
async function missingFolders(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let path = dir; ; path = dirname(path)) {
    try {
      const found = await stat(path);
      if (!found.isDirectory()) throw Object.assign(new Error(path), { code: 'EEXIST' });
      return missing.reverse();
    } catch (err) {
      // The path is missing (ENOENT), or a file above it (ENOTDIR, found further up): made below.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw dirError('create', path, err);
      missing.push(path);
      if (dirname(path) === path) return missing.reverse();
    }
  }
}

/**
 * Creates `dir` and its missing parents, one `mkdir` each (what `mkdir -p` does, without Node's
 * recursive mkdir: see the module comment).
 * @throws {DirError} naming the path the file system refused and why.
 */
export async function makeDirs(dir: string): Promise<void> {
  for (const path of await missingFolders(resolve(dir))) {
    try {
      await mkdir(path);
    } catch (err) {
      // Made meanwhile by someone else: fine when it is a folder.
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && (await isFolder(path))) continue;
      throw dirError('create', path, err);
    }
  }
}

/**
 * Creates `dir` ({@link makeDirs}), then checks that a file can be created in it (and removes that
 * file), so a folder a run cannot write fails at once, before anything is changed or sent.
 * @throws {DirError} naming the path the file system refused and why (read-only, permission, a
 *   file in the way, a virtual file system); another Error for a non-system failure.
 */
export async function makeWritableDir(dir: string): Promise<void> {
  await makeDirs(dir);
  const probe = join(resolve(dir), `.tokenload-write-check-${process.pid}`);
  try {
    await (await open(probe, 'w')).close();
  } catch (err) {
    throw dirError('write in', resolve(dir), err);
  }
  await rm(probe, { force: true });
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
