/**
 * What a new user met in a fresh-eyes pass and read badly: each case is the command line (or the
 * library call) as typed and the message it now gives. Through the CLI's `main` in this process
 * (usage errors, nothing runs) or the package's exported API.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ConfigError, parseProfileArgs, profileConfig } from '../../src/index.js';
import { runCliInProcess as tokenload } from '../helpers/cli-in-process.js';

/** A profile command line that is valid up to what a case adds; nothing runs before the flags are read. */
const PROFILE = ['profile', '--simulator', '-m', 'm', '--tokenizer', 'builtin'];

test('numbers, one rule: a decimal number (2.5, 1000, 1e3) for a number, digits only for an integer (--isl, --osl)', async () => {
  // Exponent notation is a number: --request-rate 1e3 is 1000 requests/s.
  const [config] = parseProfileArgs(['-m', 'm', '--request-rate', '1e3', '--isl', '32']);
  assert.equal(config?.requestRate, 1000);
  assert.equal(config?.synthetic?.isl, 32);
  const refused: Array<[string[], string]> = [
    [
      ['--isl', '3.2e1'],
      `'--isl <tokens>' argument '3.2e1' is invalid. expected an integer, digits only (1000), got "3.2e1"`,
    ],
    [
      ['--isl', '32.0'],
      `'--isl <tokens>' argument '32.0' is invalid. expected an integer, digits only (1000), got "32.0"`,
    ],
    [
      ['--osl', '1e2'],
      `'--osl <tokens>' argument '1e2' is invalid. expected an integer, digits only (1000), got "1e2"`,
    ],
    [
      ['--request-rate', ' 5'],
      `'--request-rate <r[,r…]>' argument ' 5' is invalid. expected a decimal number (2.5, 1000, 1e3), got " 5"`,
    ],
    [
      ['--request-rate', 'Infinity'],
      `'--request-rate <r[,r…]>' argument 'Infinity' is invalid. expected a decimal number (2.5, 1000, 1e3), got "Infinity"`,
    ],
    [
      ['--seq-dist', '512.5,16:100'],
      '--seq-dist: expected an ISL like 512 or 512|50 in "512.5,16:100", got 512.5',
    ],
  ];
  for (const [extra, message] of refused) {
    const r = await tokenload([...PROFILE, ...extra]);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.ok(r.stderr.includes(message), `${extra.join(' ')}: ${r.stderr}`);
  }
  // Commands whose options are not schema-derived state the same rule.
  const plot = await tokenload(['plot', '.', '--scale', '0x2']);
  assert.equal(plot.code, 2, plot.stderr);
  assert.ok(
    plot.stderr.includes(
      `'--scale <n>' argument '0x2' is invalid. expected a decimal number (2.5, 1000, 1e3), got "0x2".`,
    ),
    plot.stderr,
  );
});

test('--concurrency and --workers beyond what one client process can use, or below one: exit 2 with the limit and the reason', async () => {
  // Found by a new user: --concurrency 99999999999 crashed (exit 70), 50000000 and --workers 100000
  // grew to gigabytes and ignored Ctrl-C.
  const refused: Array<[string[], string]> = [
    [
      ['--concurrency', '99999999999'],
      `argument '99999999999' is invalid. expected a number <= 65536, got 99999999999: one client process cannot hold more connections to one server (its ports run out); split a larger load with --shard-count.`,
    ],
    [['--concurrency', '1,70000'], 'expected a number <= 65536, got 70000: one client process'],
    [
      ['--workers', '100000'],
      `argument '100000' is invalid. expected a number <= 256, got 100000: worker threads share this machine's cores`,
    ],
    // Found by a new user: 0 did not say what to type instead.
    [['--workers', '0'], 'got 0: 1 is a single process (the default); auto sizes the threads from the load'],
    [['--workers', '1.5'], "argument '1.5' is invalid. expected a whole number from 1 to 256, or auto"],
  ];
  for (const [extra, message] of refused) {
    const r = await tokenload([...PROFILE, '--request-count', '3', ...extra]);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.ok(r.stderr.includes(message), `${extra.join(' ')}: ${r.stderr}`);
  }
  // The largest accepted values are accepted.
  const [config] = parseProfileArgs(['-m', 'm', '--concurrency', '65536', '--workers', '256']);
  assert.equal(config?.concurrency, 65536);
  assert.equal(config?.workers, 256);
});

test('--simulator with a --url: refused, since the run would measure the simulator instead of that server', async () => {
  const r = await tokenload([
    'profile',
    '--simulator',
    '-m',
    'm',
    '--url',
    'localhost:9',
    '--request-count',
    '1',
  ]);
  assert.equal(r.code, 2, r.stderr);
  assert.ok(
    r.stderr.includes(
      '--url http://localhost:9 with --simulator: the run would measure the built-in simulator, not that server',
    ),
    r.stderr,
  );
  // Typed, even the default URL is refused: a user's real server may be there (found by a new user).
  assert.throws(
    () => parseProfileArgs(['-m', 'm', '--simulator', '--url', 'localhost:8000']),
    /--url http:\/\/localhost:8000 with --simulator: the run would measure the built-in simulator/,
  );
  // The default --url (none given) is what --simulator replaces.
  const [config] = parseProfileArgs(['-m', 'm', '--simulator']);
  assert.equal(config?.simulator, true);
});

test('an --input-file among the files the run replaces in its --artifact-dir: refused, the file kept', async () => {
  // Found by a new user: an earlier run's inputs.json given back with the same folder was removed
  // by the run's claim of the folder and replaced by the new run's inputs.json.
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-input-in-dir-'));
  const input = join(dir, 'inputs.json');
  copyFileSync('examples/traces/bailian_traceA_stratified_head24.jsonl', input);
  const before = readFileSync(input, 'utf8');
  const trace = ['--input-file', input, '--custom-dataset-type', 'bailian_trace'];
  for (const load of [[], ['--no-fixed-schedule', '--concurrency', '1,2']]) {
    const r = await tokenload([...PROFILE, ...trace, ...load, '--artifact-dir', dir]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /--input-file .*inputs\.json is one of the files this run replaces in --artifact-dir/,
    );
    assert.equal(readFileSync(input, 'utf8'), before);
  }
});

test('the library: parseProfileArgs throws ConfigError for every bad command line; profileConfig suggests a near key', () => {
  // Found by a new user: an unknown option or a bad value threw commander's own error (exit code 1,
  // code commander.*), --help printed to stdout, and a mistyped key got no suggestion.
  const cases: Array<[string[], string]> = [
    [['-m', 'm', '--bogus'], "unknown option '--bogus'"],
    [['-m', 'm', '--request-count', 'x'], `option '--request-count <n>' argument 'x' is invalid.`],
    [['-m', 'm', '--endpoint-type', 'nope'], 'expected one of chat, completions,'],
    [['--help'], '--help asks for the help text (tokenload profile --help), not a run'],
  ];
  for (const [args, message] of cases) {
    assert.throws(
      () => parseProfileArgs(args),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.code === 'E_CONFIG' &&
        err.exitCode === 2 &&
        err.message.includes(message),
      args.join(' '),
    );
  }
  assert.throws(() => profileConfig({ models: ['m'], requestCnt: 5 } as never), {
    message: 'requestCnt: unknown option requestCnt (Did you mean requestCount?)',
  });
  assert.throws(() => profileConfig({ models: ['m'], synthetic: { isll: 3 } } as never), {
    message: 'synthetic.isll: unknown option isll (Did you mean isl?)',
  });
});

test('a binary or gzip-compressed trace: the error quotes it with control characters escaped, and says gzip', async () => {
  // Found by a new user: the message echoed the file's raw bytes (gzip header, NUL, control codes) to the terminal.
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-binary-'));
  const gz = join(dir, 'trace.jsonl.gz');
  writeFileSync(gz, gzipSync(readFileSync('examples/traces/bailian_traceA_stratified_head24.jsonl')));
  const raw = join(dir, 'raw.jsonl');
  writeFileSync(raw, Buffer.from([0x7b, 0x01, 0x02, 0x1b, 0x5b, 0x32, 0x4a, 0x00, 0x0a]));
  for (const [file, hint] of [
    [gz, true],
    [raw, false],
  ] as const) {
    const r = await tokenload(['analyze-trace', file, '--custom-dataset-type', 'bailian_trace']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1: not valid JSON`));
    const controls = [...r.stderr].filter((c) => c !== '\n' && (c < ' ' || c === '\u007f' || c === '\ufffd'));
    assert.deepEqual(controls, [], r.stderr);
    assert.equal(r.stderr.includes('looks gzip-compressed: decompress it first'), hint, r.stderr);
  }
  assert.match(
    (await tokenload(['analyze-trace', raw, '--custom-dataset-type', 'bailian_trace'])).stderr,
    /\\x01\\x02\\x1b\[2J\\x00/,
  );
});
