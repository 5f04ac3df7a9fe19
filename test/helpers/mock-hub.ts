/**
 * A Hugging Face Hub stand-in on loopback, speaking the file protocol of the real one as
 * `huggingface_hub` sees it: `GET /<org>/<name>/resolve/<revision>/<file>` answers
 * - a large file (`tokenizer.json`) with a 302 to a storage host on another origin, carrying
 *   `X-Repo-Commit` and `X-Linked-Etag` (the sha256); the storage host refuses a request that brings
 *   an `Authorization` header (as cloud storage does: the token must not travel there);
 * - a small file with 200, `X-Repo-Commit` and `ETag` (the git blob hash);
 * - 401 `GatedRepo` for a gated repository without the right bearer token, 404 `RepoNotFound`,
 *   `RevisionNotFound` or `EntryNotFound` (with `X-Repo-Commit`);
 * - and, for the faults a real Hub (or something posing as one) may show: every file answered
 *   directly with headers of the test's choosing (`answerHeaders`), or no answer at all (`hang`).
 * Every request is logged (path, and whether it carried a token).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One repository of the mock Hub. */
export interface MockRepo {
  /** Files by path inside the repository. */
  files: Record<string, Uint8Array>;
  /** The commit `main` points to (40 hex digits). */
  commit: string;
  /** Only a request with `Authorization: Bearer <token>` may read it. */
  gatedToken?: string;
  /** Every file is answered 200 directly (no redirect) with these headers instead of the Hub's own. */
  answerHeaders?: Record<string, string>;
  /** Requests are accepted and never answered. */
  hang?: boolean;
}

/** A request the mock saw. */
export interface MockRequest {
  host: 'hub' | 'storage';
  path: string;
  authorized: boolean;
}

/** A running mock Hub. */
export interface MockHub {
  /** The endpoint to put in `HF_ENDPOINT`. */
  url: string;
  requests: MockRequest[];
  close(): Promise<void>;
}

/** Files served through the storage redirect (the others are answered directly). */
const LARGE_FILES = new Set(['tokenizer.json']);

/** The git blob hash of `content` (what the Hub sends as a small file's ETag). */
export function gitBlobHash(content: Uint8Array): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** The sha256 of `content` (a large file's `X-Linked-Etag`). */
export function sha256(content: Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  // Idle connections stay open until the Hub is closed, as a real Hub's outlive a download. Node's
  // default (closed after 5 s idle) raced the CLI on a loaded machine: its event loop busy checking
  // the 11 MB tokenizer.json for longer than that, it sent the next request on a connection the
  // server had closed meanwhile (UND_ERR_SOCKET "other side closed").
  server.keepAliveTimeout = 0;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function originOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function fail(res: ServerResponse, status: number, code: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { 'x-error-code': code, 'x-error-message': `${code} (mock)`, ...extra });
  res.end(code);
}

/** Starts the Hub and its storage host. */
export async function startMockHub(repos: Record<string, MockRepo>): Promise<MockHub> {
  const requests: MockRequest[] = [];
  const blobs = new Map<string, Uint8Array>();
  const storage = await listen((req, res) => {
    requests.push({
      host: 'storage',
      path: req.url ?? '',
      authorized: req.headers.authorization !== undefined,
    });
    if (req.headers.authorization !== undefined) return fail(res, 400, 'OnlyOneAuthMechanismAllowed');
    const blob = blobs.get((req.url ?? '').replace('/blobs/', ''));
    if (blob === undefined) return fail(res, 404, 'NoSuchKey');
    res.writeHead(200, { etag: '"storage-etag"', 'content-length': blob.length });
    res.end(blob);
  });
  const hub = await listen((req, res) => {
    const auth = req.headers.authorization;
    requests.push({ host: 'hub', path: req.url ?? '', authorized: auth !== undefined });
    const m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(req.url ?? '');
    const repo = m === null ? undefined : repos[m[1] as string];
    if (m === null || repo === undefined) return fail(res, 404, 'RepoNotFound');
    if (repo.gatedToken !== undefined && auth !== `Bearer ${repo.gatedToken}`)
      return fail(res, 401, 'GatedRepo');
    const revision = decodeURIComponent(m[2] as string);
    if (revision !== 'main' && revision !== repo.commit) return fail(res, 404, 'RevisionNotFound');
    if (repo.hang === true) return;
    const file = m[3] as string;
    const content = repo.files[file];
    const commit = { 'x-repo-commit': repo.commit };
    if (content === undefined) return fail(res, 404, 'EntryNotFound', commit);
    if (repo.answerHeaders !== undefined) {
      res.writeHead(200, { ...repo.answerHeaders, 'content-length': content.length });
      return res.end(content);
    }
    if (LARGE_FILES.has(file)) {
      const hash = sha256(content);
      blobs.set(hash, content);
      res.writeHead(302, {
        ...commit,
        'x-linked-etag': `"${hash}"`,
        etag: `"${gitBlobHash(content)}"`,
        location: `${originOf(storage)}/blobs/${hash}`,
      });
      return res.end();
    }
    res.writeHead(200, { ...commit, etag: `W/"${gitBlobHash(content)}"`, 'content-length': content.length });
    res.end(content);
  });
  const close = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));
  return {
    url: originOf(hub),
    requests,
    close: async () => {
      hub.closeAllConnections();
      storage.closeAllConnections();
      await Promise.all([close(hub), close(storage)]);
    },
  };
}
