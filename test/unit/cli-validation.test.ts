/** Flag validation a user hits first: bad values fail before anything is sent, naming the flag. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { configFileTokens } from '../../src/cli/config-file.js';
import { main } from '../../src/cli/main.js';
import { collectHeaders, collectSimulatorOption } from '../../src/cli/parsers.js';

async function exitCodeOf(args: string[]): Promise<{ code: number; stderr: string }> {
  const chunks: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((c: string | Uint8Array) => {
    chunks.push(String(c));
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await main(['node', 'tokenload', ...args]);
    return { code, stderr: chunks.join('') };
  } finally {
    process.stderr.write = write;
  }
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
    '--simulator',
    '--goodput',
    'time_to_first_token:-1',
  ]);
  assert.equal(negative.code, 2);
});

test('--simulator-option: unknown names and bad values are usage errors; kebab-case maps to camelCase', async () => {
  assert.deepEqual(collectSimulatorOption('ttft-ms=20'), { ttftMs: 20 });
  const unknown = await exitCodeOf(['profile', '-m', 'm', '--simulator', '--simulator-option', 'bogus=1']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /bogus: unknown simulator parameter/);
  const bad = await exitCodeOf(['profile', '-m', 'm', '--simulator', '--simulator-option', 'ttft-ms=abc']);
  assert.equal(bad.code, 2);
  // The message names the option as the user typed it, not the internal camelCase field.
  const negative = await exitCodeOf([
    'profile',
    '-m',
    'm',
    '--simulator',
    '--simulator-option',
    'warmup-ms=-1',
  ]);
  assert.equal(negative.code, 2);
  assert.match(negative.stderr, /--simulator-option warmup-ms: /);
});

test('-f config keys may be kebab, snake or camel case; lists and booleans become flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-cfg-'));
  const file = join(dir, 'run.yaml');
  writeFileSync(
    file,
    'request_count: 5\nrequestRate: [10, 20]\nstreaming: true\nfixed-schedule-auto-offset: false\n',
  );
  assert.deepEqual(configFileTokens(file), [
    '--request-count',
    '5',
    '--request-rate',
    '10,20',
    '--streaming',
    '--no-fixed-schedule-auto-offset',
  ]);
});

test('an unknown flag exits 2', async () => {
  const r = await exitCodeOf(['profile', '-m', 'm', '--bogus']);
  assert.equal(r.code, 2);
});
