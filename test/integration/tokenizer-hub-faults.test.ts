/**
 * The tokenizer resolution of issue 15 when something is wrong, through the CLI: a Hub answer whose
 * names would lead out of the cache, or whose body is no tokenizer, is refused before anything is
 * stored (naming the header or what was wrong, and the URL); Ctrl-C stops a download at once (exit
 * 130, an interrupted summary); a broken cache entry, a bad `--tokenizer-revision`, a bad
 * `HF_ENDPOINT` and a corrupt `tokenizer_config.json` are each named. The Hub is a mock on loopback;
 * every child has its own cache.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeCachedFile, writeCachedRef } from '../../src/prompt/hf-cache.js';
import {
  type CliResult,
  type CountingTarget,
  fakeCache,
  profile,
  removeTempDirs,
  repoDir,
  startCli,
  startCountingTarget,
  startProfile,
  summaryOf,
  TOKENIZER_CONFIG,
  TOKENIZER_FILES,
  TOKENIZER_JSON,
  tempDir,
} from '../helpers/hub-cli.js';
import { gitBlobHash, type MockHub, startMockHub } from '../helpers/mock-hub.js';

const REPO = 'acme/chat-7b';
const COMMIT = 'c0ffee'.padEnd(40, '0');
/** Five levels up from `<root>/a/b/hub/models--…/snapshots` (or `blobs`): `<root>`. */
const UP = '../../../../../';
const EVIL_COMMIT = 'acme/evil-commit';
const EVIL_ETAG = 'acme/evil-etag';
const HTML = 'acme/html-page';
const NO_MODEL = 'acme/no-model';
const TRUNCATED_CONFIG = 'acme/truncated-config';
const HANG = 'acme/never-answers';

const HTML_PAGE = Buffer.from('<!DOCTYPE html><html><body>Please sign in</body></html>');

let hub: MockHub;
/** A `--url` target that counts what it receives: the failing runs must send it nothing. */
let target: CountingTarget;
before(async () => {
  const evilHeaders = (commit: string, etag: string) => ({ 'x-repo-commit': commit, etag: `"${etag}"` });
  hub = await startMockHub({
    [REPO]: { files: TOKENIZER_FILES, commit: COMMIT },
    [EVIL_COMMIT]: {
      files: TOKENIZER_FILES,
      commit: COMMIT,
      answerHeaders: evilHeaders(`${UP}victim`, gitBlobHash(TOKENIZER_JSON)),
    },
    [EVIL_ETAG]: {
      files: TOKENIZER_FILES,
      commit: COMMIT,
      answerHeaders: evilHeaders(COMMIT, `${UP}escaped_blob`),
    },
    [HTML]: { files: { 'tokenizer.json': HTML_PAGE }, commit: COMMIT },
    [NO_MODEL]: { files: { 'tokenizer.json': Buffer.from('{"version": "1.0"}') }, commit: COMMIT },
    [TRUNCATED_CONFIG]: {
      files: { ...TOKENIZER_FILES, 'tokenizer_config.json': TOKENIZER_CONFIG.subarray(0, 100) },
      commit: COMMIT,
    },
    [HANG]: { files: TOKENIZER_FILES, commit: COMMIT, hang: true },
  });
  target = await startCountingTarget();
});
after(async () => {
  await hub.close();
  await target.close();
  removeTempDirs();
});

function targetArgs(): string[] {
  return target.args();
}

function mainUrl(repo: string): string {
  return `${hub.url}/${repo}/resolve/main/tokenizer.json`;
}

/** Asserts `r` failed with exit `code` before sending, its stderr holding every one of `parts`. */
function assertFailed(r: CliResult, code: number, parts: string[]): void {
  assert.equal(r.code, code, r.stderr);
  for (const part of parts) assert.ok(r.stderr.includes(part), `stderr has ${part}\n${r.stderr}`);
  assert.equal(target.hits(), 0, 'nothing was sent');
}

test('a Hub answer whose commit or ETag leads out of the cache is refused, naming the header and the URL', async () => {
  const root = tempDir();
  const cache = join(root, 'a', 'b', 'hub');
  mkdirSync(join(root, 'victim'));
  writeFileSync(join(root, 'victim', 'tokenizer.json'), 'precious');
  const env = { HF_ENDPOINT: hub.url, HF_HUB_CACHE: cache };

  const byCommit = await profile(EVIL_COMMIT, env, targetArgs());
  assertFailed(byCommit, 1, [
    `${mainUrl(EVIL_COMMIT)}: answer refused: its X-Repo-Commit "${UP}victim" is not a 40-hex-digit commit hash`,
    'nothing was stored in the Hugging Face cache',
  ]);
  const byEtag = await profile(EVIL_ETAG, env, targetArgs());
  assertFailed(byEtag, 1, [`${mainUrl(EVIL_ETAG)}: answer refused: its ETag "\\"${UP}escaped_blob\\""`]);

  assert.equal(readFileSync(join(root, 'victim', 'tokenizer.json'), 'utf8'), 'precious');
  assert.deepEqual(readdirSync(root), ['victim'], 'nothing was written, in the cache or beside it');
  assert.ok(!existsSync(repoDir(cache, EVIL_COMMIT)) && !existsSync(repoDir(cache, EVIL_ETAG)));
});

test('the cache writer keeps every path inside its folder, whatever names it is given', async () => {
  const root = tempDir();
  const cache = join(root, 'hub');
  const write = { repo: REPO, file: 'tokenizer.json', content: TOKENIZER_JSON };
  await assert.rejects(
    writeCachedFile(cache, { ...write, commit: `${UP}x`, etag: 'abc' }),
    /not a commit hash/,
  );
  await assert.rejects(writeCachedFile(cache, { ...write, commit: COMMIT, etag: '../x' }), /not a hash/);
  await assert.rejects(writeCachedRef(cache, REPO, '../../../x', COMMIT), /leads outside .*refs/);
  assert.deepEqual(readdirSync(root), [], 'nothing was written');
});

test('a 200 answer that is no tokenizer is refused, the URL and the fault named, and the cache stays clean', async () => {
  const home = tempDir();
  const env = { HF_ENDPOINT: hub.url, HF_HOME: home };
  const cache = join(home, 'hub');
  const html = await profile(HTML, env, targetArgs());
  assertFailed(html, 1, [
    `${mainUrl(HTML)}: the answer is not JSON (`,
    'it starts "<!DOCTYPE html><html><body>Please sign in</body></html>"',
    'nothing was stored in the Hugging Face cache',
  ]);
  const noModel = await profile(NO_MODEL, env, targetArgs());
  assertFailed(noModel, 1, [`${mainUrl(NO_MODEL)}: the answer has no "model" object (not a tokenizer.json)`]);
  // tokenizer.json is fine, its config is cut short: neither is stored.
  const truncated = await profile(TRUNCATED_CONFIG, env, targetArgs());
  assertFailed(truncated, 1, [
    `${hub.url}/${TRUNCATED_CONFIG}/resolve/${COMMIT}/tokenizer_config.json: the answer is not JSON`,
  ]);
  for (const repo of [HTML, NO_MODEL, TRUNCATED_CONFIG]) assert.ok(!existsSync(repoDir(cache, repo)), repo);

  // Later offline runs are not poisoned: they find nothing, and say so.
  const offline = await profile(TRUNCATED_CONFIG, { ...env, HF_HUB_OFFLINE: '1' }, targetArgs());
  const ref = join(repoDir(cache, TRUNCATED_CONFIG), 'refs', 'main');
  assertFailed(offline, 1, [`Hugging Face cache ${ref}: no such file`]);
});

test('Ctrl-C during a tokenizer download stops it at once: exit 130 and an interrupted summary', async () => {
  const run = startProfile(HANG, { HF_ENDPOINT: hub.url, HF_HOME: tempDir() }, targetArgs());
  while (!hub.requests.some((q) => q.path === `/${HANG}/resolve/main/tokenizer.json`)) {
    assert.equal(run.child.exitCode, null, run.stderr());
    await sleep(50);
  }
  assert.match(
    run.stderr(),
    /tokenizer: downloading http:\/\/127\.0\.0\.1:\d+\/acme\/never-answers\/resolve\/main/,
  );
  run.child.kill('SIGINT');
  const r = await run.done;
  assertFailed(r, 130, [
    `--model ${HANG} (the default --tokenizer): interrupted (Ctrl-C or SIGTERM) while downloading ${mainUrl(HANG)}; nothing was sent`,
  ]);
  assert.doesNotMatch(r.stderr, /UND_ERR_HEADERS_TIMEOUT/);
  const s = summaryOf<{
    was_cancelled: boolean;
    run_status: { status: string; reason: string; exit_code: number };
  }>(r);
  assert.deepEqual(
    [s.run_status.status, s.run_status.exit_code, s.was_cancelled],
    ['interrupted', 130, true],
  );
  assert.match(
    s.run_status.reason,
    /^interrupted \(Ctrl-C or SIGTERM\) during start-up, before anything was sent/,
  );
});

test('a broken cache entry is named: the file, what it held, and --tokenizer-revision', async () => {
  const label = `--model ${REPO} (the default --tokenizer): no tokenizer found; nothing was sent`;
  const expected = 'expected the 40-hex-digit commit hash --tokenizer-revision main points to';
  const other = 'abc'.padEnd(40, '1');
  const cases: Array<[string, (ref: string) => void, string]> = [
    ['a folder', (ref) => mkdirSync(ref), `: a folder, not a file (${expected})`],
    ['empty', (ref) => writeFileSync(ref, '\n'), `: empty (${expected})`],
    ['not a hash', (ref) => writeFileSync(ref, 'v1.0\n'), `: holds "v1.0" (${expected})`],
    ['another commit', (ref) => writeFileSync(ref, other), ''],
  ];
  for (const [what, breakRef, reason] of cases) {
    const cache = fakeCache(REPO, COMMIT, TOKENIZER_JSON);
    const ref = join(repoDir(cache, REPO), 'refs', 'main');
    rmSync(ref);
    breakRef(ref);
    const r = await profile(REPO, { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: cache }, targetArgs());
    const snapshot = join(repoDir(cache, REPO), 'snapshots', other, 'tokenizer.json');
    const line =
      reason === ''
        ? `Hugging Face cache ${snapshot}: no such file (${ref} holds ${other}: the snapshot --tokenizer-revision main points to)`
        : `Hugging Face cache ${ref}${reason}`;
    assertFailed(r, 1, [label, line]);
    assert.doesNotMatch(r.stderr, /EISDIR/, what);
  }

  // Online, a broken ref is passed over with a warning, and the download writes a good one.
  const cache = fakeCache(REPO, COMMIT, TOKENIZER_JSON);
  const ref = join(repoDir(cache, REPO), 'refs', 'main');
  writeFileSync(ref, '');
  const r = await profile(REPO, { HF_ENDPOINT: hub.url, HF_HUB_CACHE: cache }, [
    '--simulator',
    '--simulator-option',
    'warmup-ms=0',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(
    r.stderr.includes(
      `warning: --model ${REPO} (the default --tokenizer): passed over the broken Hugging Face cache ${ref}: empty`,
    ),
  );
  assert.equal(readFileSync(ref, 'utf8'), COMMIT);
});

test('--tokenizer-revision: a name no ref can have is refused (exit 2); a branch with / is refs/<a>/<b>; a hash is printed once', async () => {
  const refused: Array<[string, string]> = [
    ['../../../etc', "has an empty, '.' or '..' part"],
    ['/etc/passwd', 'is an absolute path'],
    ['a\\b', 'holds a backslash'],
  ];
  for (const [revision, problem] of refused) {
    const r = await profile(REPO, { HF_HUB_OFFLINE: '1' }, [
      ...targetArgs(),
      '--tokenizer-revision',
      revision,
    ]);
    assertFailed(r, 2, ['--tokenizer-revision', `${JSON.stringify(revision)} ${problem}`]);
  }

  const cache = fakeCache(REPO, COMMIT, TOKENIZER_JSON);
  mkdirSync(join(repoDir(cache, REPO), 'refs', 'refs', 'pr'), { recursive: true });
  writeFileSync(join(repoDir(cache, REPO), 'refs', 'refs', 'pr', '1'), COMMIT);
  const snapshot = join(repoDir(cache, REPO), 'snapshots', COMMIT);
  const sim = ['--simulator', '--simulator-option', 'warmup-ms=0'];
  const env = { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: cache };
  const pr = await profile(REPO, env, [...sim, '--tokenizer-revision', 'refs/pr/1']);
  assert.equal(pr.code, 0, pr.stderr);
  assert.ok(
    pr.stdout.includes(`Tokenizer: ${REPO} from the Hugging Face cache ${snapshot} (refs/pr/1 = ${COMMIT})`),
  );

  const byHash = await profile(REPO, env, [...sim, '--tokenizer-revision', COMMIT]);
  assert.equal(byHash.code, 0, byHash.stderr);
  assert.ok(
    byHash.stdout.includes(`Tokenizer: ${REPO} from the Hugging Face cache ${snapshot} (${COMMIT})\n`),
  );
});

test('HF_ENDPOINT that is no URL is named as such, not as an unwritable cache', async () => {
  const r = await profile('acme/other-7b', { HF_ENDPOINT: 'notaurl', HF_HOME: tempDir() }, targetArgs());
  assertFailed(r, 1, ['HF_ENDPOINT="notaurl" is not an http(s) URL of a Hugging Face Hub']);
  assert.doesNotMatch(r.stderr, /cannot write the Hugging Face cache/);
});

test('a corrupt tokenizer_config.json beside a good tokenizer.json is named, not tokenizer.json', async () => {
  const folder = tempDir();
  writeFileSync(join(folder, 'tokenizer.json'), TOKENIZER_JSON);
  writeFileSync(join(folder, 'tokenizer_config.json'), '{"chat_template": 5');
  const r = await profile('m', {}, [...targetArgs(), '--tokenizer', folder]);
  assertFailed(r, 1, [`cannot read ${join(folder, 'tokenizer_config.json')}: `]);
  assert.ok(!r.stderr.includes(`cannot read ${join(folder, 'tokenizer.json')}`), r.stderr);
});

test('tokenload simulate: a tokenizer it cannot find fails without claiming "nothing was sent"', async () => {
  const r = await startCli(['simulate', '--tokenizer', 'acme/none-7b'], { HF_HUB_OFFLINE: '1' }).done;
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /--tokenizer acme\/none-7b: no tokenizer found\. Tried:/);
  assert.doesNotMatch(r.stderr, /nothing was sent/);
});
