/**
 * Issue 15 scope 1, through the CLI: `--model org/name` finds its tokenizer as the Hugging Face
 * libraries do: in the local Hub cache (`HF_HUB_CACHE`, `HF_HOME`), else by downloading it from the
 * Hub (`HF_ENDPOINT`, a mock on loopback here) into that cache's layout, with `HF_TOKEN` for a gated
 * model; `HF_HUB_OFFLINE=1` never asks the Hub. When nothing works the run fails before sending
 * anything, naming every path and URL it tried. No test touches the network: every child runs with
 * its own `HF_*` variables (the caller's are dropped) and its own cache folder.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { packageRoot } from '../../src/util/package-root.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { gitBlobHash, type MockHub, sha256, startMockHub } from '../helpers/mock-hub.js';

const REPO = 'acme/chat-7b';
const GATED = 'acme/gated-7b';
const COMMIT = 'c0ffee'.padEnd(40, '0');
const TOKEN = 'hf_mock_secret_token_for_tests';

const assets = join(packageRoot(), 'assets', 'tokenizers', 'qwen3');
const tokenizerJson = gunzipSync(readFileSync(join(assets, 'tokenizer.json.gz')));
const tokenizerConfig = readFileSync(join(assets, 'tokenizer_config.json'));
const files = { 'tokenizer.json': tokenizerJson, 'tokenizer_config.json': tokenizerConfig };

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-hub-'));
  dirs.push(dir);
  return dir;
}

let hub: MockHub;
/** A `--url` target that counts what it receives: the failing runs must send it nothing. */
let target: Server;
let targetHits = 0;
before(async () => {
  hub = await startMockHub({
    [REPO]: { files, commit: COMMIT },
    [GATED]: { files, commit: COMMIT.replace('c0', 'ab'), gatedToken: TOKEN },
  });
  target = createServer((_req, res) => {
    targetHits++;
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', () => resolve()));
});
after(async () => {
  await hub.close();
  target.closeAllConnections();
  await new Promise<void>((resolve) => target.close(() => resolve()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
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

/** Runs `tokenload profile -m <model> …` with `env` added to a clean environment. */
async function profile(model: string, env: Record<string, string>, args: string[]): Promise<CliResult> {
  const dir = join(tempDir(), 'run');
  const argv = ['profile', '-m', model, '--request-count', '3', '--client-warmup-ms', '0'];
  const childEnv = { ...cleanEnv(), HOME: tempDir(), ...env };
  const r = await runCliProcess([...argv, '--ui', 'none', '--artifact-dir', dir, ...args], childEnv);
  return { ...r, dir };
}

const SIMULATOR = ['--simulator', '--simulator-option', 'mode=fixed', '--simulator-option', 'warmup-ms=0'];

function targetArgs(): string[] {
  return ['--url', `http://127.0.0.1:${(target.address() as AddressInfo).port}`];
}

interface Summary {
  tokenizer: { source: string; path: string; repo: string; revision: string; commit: string };
  run_status: { status: string; exit_code: number };
}

function summaryOf(r: CliResult): Summary {
  return JSON.parse(readFileSync(join(r.dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
}

/** A cache holding `repo` at COMMIT as huggingface_hub lays it out, `tokenizer.json` being `json`. */
function fakeCache(repo: string, json: Uint8Array): string {
  const cache = join(tempDir(), 'hub');
  const root = join(cache, `models--${repo.replace('/', '--')}`);
  mkdirSync(join(root, 'refs'), { recursive: true });
  mkdirSync(join(root, 'blobs'));
  mkdirSync(join(root, 'snapshots', COMMIT), { recursive: true });
  writeFileSync(join(root, 'refs', 'main'), COMMIT);
  for (const [name, content] of Object.entries({ ...files, 'tokenizer.json': json })) {
    writeFileSync(join(root, 'blobs', gitBlobHash(content)), content);
    symlinkSync(join('..', '..', 'blobs', gitBlobHash(content)), join(root, 'snapshots', COMMIT, name));
  }
  return cache;
}

test('HF_HUB_OFFLINE with a populated cache: --model org/name uses the cached tokenizer', async () => {
  const cache = fakeCache(REPO, tokenizerJson);
  const r = await profile(REPO, { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: cache }, SIMULATOR);
  assert.equal(r.code, 0, r.stderr);
  const snapshot = join(cache, `models--acme--chat-7b`, 'snapshots', COMMIT);
  assert.deepEqual(summaryOf(r).tokenizer, {
    requested: REPO,
    source: 'cache',
    path: snapshot,
    repo: REPO,
    revision: 'main',
    commit: COMMIT,
    reason: null,
    chat_template: null,
  });
  assert.ok(
    r.stdout.includes(`Tokenizer: ${REPO} from the Hugging Face cache ${snapshot} (main = ${COMMIT})`),
  );
  assert.equal(hub.requests.length, 0, 'the Hub was not asked');

  // The cached file is what was read: a broken one (found through HF_HOME/hub) fails the run, named.
  const broken = fakeCache(REPO, Buffer.from('{"not": "a tokenizer"'));
  const bad = await profile(REPO, { HF_HUB_OFFLINE: '1', HF_HOME: join(broken, '..') }, targetArgs());
  assert.equal(bad.code, 1, bad.stderr);
  assert.ok(bad.stderr.includes(join(broken, 'models--acme--chat-7b', 'snapshots', COMMIT)), bad.stderr);
  assert.equal(targetHits, 0);
});

test('from the Hub: downloaded into the cache layout the Python tools read, then found offline', async () => {
  const home = tempDir();
  const env = { HF_ENDPOINT: hub.url, HF_HOME: home };
  const first = hub.requests.length;
  const r = await profile(REPO, env, SIMULATOR);
  assert.equal(r.code, 0, r.stderr);
  const root = join(home, 'hub', 'models--acme--chat-7b');
  const snapshot = join(root, 'snapshots', COMMIT);
  const s = summaryOf(r).tokenizer;
  assert.deepEqual([s.source, s.path, s.commit], ['hub', snapshot, COMMIT]);
  assert.match(r.stdout, /Tokenizer: acme\/chat-7b downloaded from the Hugging Face Hub into the cache/);

  // refs/main → the commit; snapshot entries are relative symlinks to blobs named by the Hub's ETag.
  assert.equal(readFileSync(join(root, 'refs', 'main'), 'utf8'), COMMIT);
  const blobOf = (name: string) => realpathSync(join(snapshot, name));
  assert.ok(lstatSync(join(snapshot, 'tokenizer.json')).isSymbolicLink());
  assert.equal(blobOf('tokenizer.json'), realpathSync(join(root, 'blobs', sha256(tokenizerJson))));
  assert.equal(
    blobOf('tokenizer_config.json'),
    realpathSync(join(root, 'blobs', gitBlobHash(tokenizerConfig))),
  );
  assert.deepEqual(readFileSync(join(snapshot, 'tokenizer.json')), tokenizerJson);
  assert.ok(
    existsSync(join(root, '.no_exist', COMMIT, 'chat_template.jinja')),
    'a file the repo lacks is marked',
  );
  assert.deepEqual(
    readdirSync(join(root, 'blobs')).sort(),
    [sha256(tokenizerJson), gitBlobHash(tokenizerConfig)].sort(),
  );

  // What was asked: tokenizer.json at main (redirected to storage), the rest at the commit it gave.
  const asked = hub.requests.slice(first).map((q) => `${q.host} ${q.path}`);
  assert.deepEqual(asked, [
    `hub /${REPO}/resolve/main/tokenizer.json`,
    `storage /blobs/${sha256(tokenizerJson)}`,
    `hub /${REPO}/resolve/${COMMIT}/tokenizer_config.json`,
    `hub /${REPO}/resolve/${COMMIT}/chat_template.jinja`,
  ]);

  const again = await profile(REPO, { ...env, HF_HUB_OFFLINE: '1' }, SIMULATOR);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(summaryOf(again).tokenizer.source, 'cache');
  assert.equal(hub.requests.length, first + asked.length, 'offline: the Hub was not asked again');
});

test('a gated model: 401 without HF_TOKEN fails before sending; with it the token stays on the Hub', async () => {
  const home = tempDir();
  const env = { HF_ENDPOINT: hub.url, HF_HOME: home };
  const denied = await profile(GATED, env, targetArgs());
  assert.equal(denied.code, 1, denied.stderr);
  assert.ok(denied.stderr.includes(`${hub.url}/${GATED}/resolve/main/tokenizer.json: HTTP 401 GatedRepo`));
  assert.match(denied.stderr, /set HF_TOKEN/);
  assert.match(denied.stderr, /nothing was sent/);
  assert.equal(summaryOf(denied).run_status.exit_code, 1);
  assert.equal(targetHits, 0);

  const first = hub.requests.length;
  const allowed = await profile(GATED, { ...env, HF_TOKEN: TOKEN }, SIMULATOR);
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.equal(summaryOf(allowed).tokenizer.source, 'hub');
  const seen = hub.requests.slice(first);
  assert.ok(seen.filter((q) => q.host === 'hub').every((q) => q.authorized));
  assert.ok(
    seen.some((q) => q.host === 'storage') &&
      seen.filter((q) => q.host === 'storage').every((q) => !q.authorized),
  );
  for (const name of readdirSync(allowed.dir)) {
    if (name.endsWith('.json') || name.endsWith('.jsonl') || name.endsWith('.txt'))
      assert.ok(!readFileSync(join(allowed.dir, name), 'utf8').includes(TOKEN), `${name} holds no token`);
  }
});

test('nothing works: the run fails before sending, naming every path and URL it tried', async () => {
  const home = tempDir();
  const cacheRef = join(home, 'hub', 'models--acme--missing-7b', 'refs', 'main');
  const missing = await profile('acme/missing-7b', { HF_ENDPOINT: hub.url, HF_HOME: home }, targetArgs());
  assert.equal(missing.code, 1, missing.stderr);
  for (const tried of [
    'local path acme/missing-7b: no such file or folder',
    `Hugging Face cache ${cacheRef}: no such file`,
    `Hugging Face Hub ${hub.url}/acme/missing-7b/resolve/main/tokenizer.json: HTTP 404 RepoNotFound`,
  ])
    assert.ok(missing.stderr.includes(tried), `${tried}\n${missing.stderr}`);
  assert.match(missing.stderr, /--tokenizer builtin/);

  const badRevision = await profile(REPO, { HF_ENDPOINT: hub.url, HF_HOME: home }, [
    ...targetArgs(),
    '--tokenizer-revision',
    'v9',
  ]);
  assert.equal(badRevision.code, 1);
  assert.ok(
    badRevision.stderr.includes(`${hub.url}/${REPO}/resolve/v9/tokenizer.json: HTTP 404 RevisionNotFound`),
  );

  const asked = hub.requests.length;
  const offline = await profile(
    REPO,
    { HF_ENDPOINT: hub.url, HF_HOME: home, HF_HUB_OFFLINE: '1' },
    targetArgs(),
  );
  assert.equal(offline.code, 1);
  assert.ok(
    offline.stderr.includes(
      `${hub.url}/${REPO}/resolve/main/tokenizer.json: not asked (HF_HUB_OFFLINE is set)`,
    ),
  );
  assert.equal(hub.requests.length, asked);
  assert.equal(targetHits, 0, 'no failing run sent anything');
});
