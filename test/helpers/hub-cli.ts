/**
 * The CLI as a Hugging Face user runs it, for the tokenizer tests: a `tokenload` child process (the
 * built CLI) with its own `HF_*` variables (the caller's, and any proxy, are dropped) and its own home,
 * and a fake Hub cache laid out as `huggingface_hub` writes it. No test using these touches the
 * network or the caller's cache.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { packageRoot } from '../../src/util/package-root.js';
import { builtCli } from './built-package.js';
import { gitBlobHash } from './mock-hub.js';

const ENTRY = builtCli();

const assets = join(packageRoot(), 'assets', 'tokenizers', 'qwen3');
/** The bundled Qwen3 `tokenizer.json`, unzipped. */
export const TOKENIZER_JSON = gunzipSync(readFileSync(join(assets, 'tokenizer.json.gz')));
/** The bundled Qwen3 `tokenizer_config.json`. */
export const TOKENIZER_CONFIG = readFileSync(join(assets, 'tokenizer_config.json'));
/** A model repository's tokenizer files. */
export const TOKENIZER_FILES = {
  'tokenizer.json': TOKENIZER_JSON,
  'tokenizer_config.json': TOKENIZER_CONFIG,
};

const dirs: string[] = [];

/** A new temporary folder, removed by {@link removeTempDirs}. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-hub-'));
  dirs.push(dir);
  return dir;
}

/** Removes every folder {@link tempDir} made. */
export function removeTempDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** How a CLI child ended. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The run's `--artifact-dir`. */
  dir: string;
}

/** The caller's environment without anything that would point a child at a real Hub, cache or proxy. */
function cleanEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(HF_|HUGGING_FACE|XDG_CACHE_HOME$|HTTPS?_PROXY$|NO_PROXY$|ALL_PROXY$)/i.test(k))
      out[k] = v;
  }
  return out;
}

/** A running CLI child and how it ends. */
export interface CliRun {
  child: ChildProcess;
  /** Everything written to stderr so far. */
  stderr(): string;
  done: Promise<CliResult>;
}

/** Starts `tokenload <args…>` with `env` added to a clean environment; `dir` is reported back. */
export function startCli(args: string[], env: Record<string, string>, dir = ''): CliRun {
  const child = spawn(process.execPath, [ENTRY, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...cleanEnv(), HOME: tempDir(), ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<CliResult>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr, dir })),
  );
  return { child, stderr: () => stderr, done };
}

/** Starts `tokenload profile -m <model> …` (3 requests, no client warm-up, a fresh artifact folder). */
export function startProfile(model: string, env: Record<string, string>, args: string[]): CliRun {
  const dir = join(tempDir(), 'run');
  const argv = ['profile', '-m', model, '--request-count', '3', '--client-warmup-ms', '0'];
  return startCli([...argv, '--ui', 'none', '--artifact-dir', dir, ...args], env, dir);
}

/** Runs `tokenload profile -m <model> …` to its end (see {@link startProfile}). */
export function profile(model: string, env: Record<string, string>, args: string[]): Promise<CliResult> {
  return startProfile(model, env, args).done;
}

/** The run's `profile_export_aiperf.json`. */
export function summaryOf<T>(r: CliResult): T {
  return JSON.parse(readFileSync(join(r.dir, 'profile_export_aiperf.json'), 'utf8')) as T;
}

/** The folder of `repo` in `cache`: `models--ORG--NAME`. */
export function repoDir(cache: string, repo: string): string {
  return join(cache, `models--${repo.replace('/', '--')}`);
}

/**
 * A cache holding `repo` at `commit` as huggingface_hub lays it out (`refs/main` → `commit`,
 * snapshot entries as relative symlinks to blobs), `tokenizer.json` being `json`.
 */
export function fakeCache(repo: string, commit: string, json: Uint8Array): string {
  const cache = join(tempDir(), 'hub');
  const root = repoDir(cache, repo);
  mkdirSync(join(root, 'refs'), { recursive: true });
  mkdirSync(join(root, 'blobs'));
  mkdirSync(join(root, 'snapshots', commit), { recursive: true });
  writeFileSync(join(root, 'refs', 'main'), commit);
  for (const [name, content] of Object.entries({ ...TOKENIZER_FILES, 'tokenizer.json': json })) {
    writeFileSync(join(root, 'blobs', gitBlobHash(content)), content);
    symlinkSync(join('..', '..', 'blobs', gitBlobHash(content)), join(root, 'snapshots', commit, name));
  }
  return cache;
}

/** A `--url` server that answers 404 to everything and counts what it receives. */
export interface CountingTarget {
  /** `['--url', <its address>]`. */
  args(): string[];
  /** Requests received so far: a run that fails before sending must leave it at 0. */
  hits(): number;
  close(): Promise<void>;
}

/** Starts a {@link CountingTarget} on loopback. */
export async function startCountingTarget(): Promise<CountingTarget> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    args: () => ['--url', `http://127.0.0.1:${(server.address() as AddressInfo).port}`],
    hits: () => hits,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
