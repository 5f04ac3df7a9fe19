/** Flag validation a user hits first: bad values fail before anything is sent, naming the flag. */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { collectHeaders, collectSimulatorOption } from '../../src/util/option-values.js';

/** Runs `main` with `args`, capturing what it writes to `stream`. */
async function captured(stream: NodeJS.WriteStream, args: string[]): Promise<{ code: number; text: string }> {
  const chunks: string[] = [];
  const write = stream.write.bind(stream);
  stream.write = ((c: string | Uint8Array) => {
    chunks.push(String(c));
    return true;
  }) as typeof stream.write;
  try {
    const code = await main(['node', 'tokenload', ...args]);
    return { code, text: chunks.join('') };
  } finally {
    stream.write = write;
  }
}

async function exitCodeOf(args: string[]): Promise<{ code: number; stderr: string }> {
  const { code, text } = await captured(process.stderr, args);
  return { code, stderr: text };
}

/** What `main` wrote to stdout (help goes there). */
async function stdoutOf(args: string[]): Promise<string> {
  return (await captured(process.stdout, args)).text;
}

test('-H rejects a value with a newline (it would break the request) but keeps tabs', () => {
  assert.throws(() => collectHeaders('X-A:line\nbreak'), /control character/);
  assert.throws(() => collectHeaders('X-A:bad\rvalue'), /control character/);
  assert.deepEqual(collectHeaders('X-A: a\tb'), { 'X-A': 'a\tb' });
});

test('--goodput with an unknown metric or a negative SLO is a usage error before any load', async () => {
  const typo = await exitCodeOf([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--simulator',
    '--goodput',
    'time_to_frist_token:300',
  ]);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /time_to_frist_token/);
  const negative = await exitCodeOf([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--simulator',
    '--goodput',
    'time_to_first_token:-1',
  ]);
  assert.equal(negative.code, 2);
});

test('--simulator-option: unknown names and bad values are usage errors; kebab-case maps to camelCase', async () => {
  assert.deepEqual(collectSimulatorOption('ttft-ms=20'), { ttftMs: 20 });
  const unknown = await exitCodeOf([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--simulator',
    '--simulator-option',
    'bogus=1',
  ]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /bogus: unknown simulator parameter/);
  const bad = await exitCodeOf([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--simulator',
    '--simulator-option',
    'ttft-ms=abc',
  ]);
  assert.equal(bad.code, 2);
  // The message names the option as the user typed it, not the internal camelCase field.
  const negative = await exitCodeOf([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--simulator',
    '--simulator-option',
    'warmup-ms=-1',
  ]);
  assert.equal(negative.code, 2);
  assert.match(negative.stderr, /--simulator-option warmup-ms: /);
});

test('-f config keys may be kebab, snake or camel case; flags typed on the command line win', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-cfg-'));
  const file = join(dir, 'run.yaml');
  writeFileSync(
    file,
    'request_count: 5\nstreaming: true\nfixed-schedule-auto-offset: false\nheader: {X-Team: a}\nextraInputs: "ignore_eos:true"\nsimulator-option: {warmup-ms: 0, fault_rate_429: 0}\n',
  );
  const artifacts = join(dir, 'out');
  const r = await exitCodeOf([
    'profile',
    '-f',
    file,
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--simulator',
    '--simulator-option',
    'warmup-ms=0',
    '--client-warmup-ms',
    '0',
    '--request-count',
    '2',
    '--ui',
    'none',
    '--artifact-dir',
    artifacts,
    '--api-key',
    'sk-SECRET-1',
    '-H',
    'Authorization: Bearer SECRET-2',
    '--api-key=sk-SECRET-3',
  ]);
  assert.equal(r.code, 0, r.stderr);
  // Every file, logs/aiperf.log included.
  const files = readdirSync(artifacts, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  assert.ok(files.some((e) => e.name === 'aiperf.log'));
  for (const entry of files) {
    const name = join(entry.parentPath, entry.name);
    const text = readFileSync(name, 'utf8');
    assert.doesNotMatch(text, /SECRET/, `${name} must not hold a secret typed on the command line`);
  }
  const summary = JSON.parse(readFileSync(join(artifacts, 'profile_export_aiperf.json'), 'utf8'));
  const config = summary.tokenload_config;
  assert.equal(config.requestCount, 2);
  assert.equal(config.streaming, true);
  assert.equal(config.fixedScheduleAutoOffset, false);
  assert.deepEqual(config.extraInputs, { ignore_eos: true });
  assert.deepEqual(config.headers, { 'X-Team': 'a', Authorization: '<redacted>' });
  assert.deepEqual(config.simulatorOptions, { warmupMs: 0, faultRate429: 0 });
  assert.match(config.commandLine, /--api-key <redacted> -H Authorization:<redacted>/);
});

test('-f names the file, line and key of a bad value or an unknown key, exit 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-cfg-'));
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'request-rate: -3\n');
  const r = await exitCodeOf(['profile', '-f', bad, '-m', 'm']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /bad\.yaml:1: key "request-rate": expected a number > 0, got -3/);
  const listItem = join(dir, 'list.yaml');
  writeFileSync(listItem, 'concurrency: ["2", "x"]\n');
  const l = await exitCodeOf(['profile', '-f', listItem, '-m', 'm']);
  assert.equal(l.code, 2);
  assert.match(l.stderr, /list\.yaml:1: key "concurrency": expected a number, got "x"\./);
  const unknown = join(dir, 'unknown.yaml');
  writeFileSync(unknown, 'reqest_rate: 3\n');
  const u = await exitCodeOf(['profile', '-f', unknown, '-m', 'm']);
  assert.equal(u.code, 2);
  assert.match(u.stderr, /unknown\.yaml:1: unknown key "reqest_rate"/);
});

test('-f refuses one option under two keys (any spelling or AIPerf name), naming the file and both keys', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-cfg-'));
  const cases: Array<[string, RegExp]> = [
    [
      'isl: 10\nsynthetic-input-tokens-mean: 20\n',
      /keys "isl" and "synthetic-input-tokens-mean" both set --isl/,
    ],
    [
      'request-count: 2\nrequest_count: 3\nrequestCount: 4\n',
      /keys "request-count" and "request_count" both set --request-count/,
    ],
    ['--url: a:1\nurl: b:2\n', /keys "--url" and "url" both set --url/],
  ];
  for (const [i, [text, message]] of cases.entries()) {
    const file = join(dir, `twice-${i}.yaml`);
    writeFileSync(file, text);
    const r = await exitCodeOf(['profile', '-f', file, '-m', 'm', '--tokenizer', 'builtin', '--simulator']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`twice-${i}\\.yaml:\\d+: `));
    assert.match(r.stderr, message);
  }
});

test('--help as a new user reads it: flags as the docs write them, defaults shown, no inverted help', async () => {
  const simulate = await stdoutOf(['simulate', '--help']);
  assert.match(simulate, /--fault-rate-429 <fraction>\s+Share of requests answered 429/);
  assert.match(simulate, /--no-prefix-cache\s+turn off --prefix-cache\n/);
  assert.match(simulate, /--prefix-cache\s+Reuse KV blocks.*\(default: on\)/);
  assert.match(simulate, /--warmup-ms <ms>.*\(default: 1000\)/);
  const profile = await stdoutOf(['profile', '--help']);
  assert.match(profile, /--arrival-pattern <p>.*\(default: poisson\)/);
  assert.match(profile, /--request-timeout-seconds <s>.*\(default: 21600\)/);
  const bad = await exitCodeOf(['simulate', '--fault-rate-429', '2']);
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /--fault-rate-429 <fraction>' argument '2' is invalid\. expected a number <= 1, got 2\./,
  );
});

test('an unknown flag exits 2', async () => {
  const r = await exitCodeOf(['profile', '-m', 'm', '--tokenizer', 'builtin', '--bogus']);
  assert.equal(r.code, 2);
});
