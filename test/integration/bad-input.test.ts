/**
 * Bad input a newcomer met that was taken silently or explained badly (#23 item 8): each is now
 * refused naming the flag, file, line or key (exit 2 for a usage error, 1 for a bad input file), or
 * warned about on the console. Through the CLI: `main` in this process for usage errors, a child
 * process for what needs a run.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { runCliProcess } from '../helpers/cli-process.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-bad-input-'));
  dirs.push(dir);
  return dir;
}

/** Runs `tokenload <args>` in this process; resolves with its exit code and what it wrote to stderr. */
async function tokenload(args: string[]): Promise<{ code: number; stderr: string }> {
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

/** A profile command line that is valid up to `extra`; nothing runs before the flags are read. */
const PROFILE = ['profile', '--simulator', '-m', 'm', '--tokenizer', 'builtin'];

test('integer flags take plain decimal digits only: 0x1, " 1", 1e3, 1.0 are refused naming the flag, exit 2', async () => {
  const cases: Array<[string[], RegExp]> = [
    [
      ['--shard-index', '0x1'],
      /'--shard-index <i>' argument '0x1' is invalid\. expected an integer in plain decimal digits, got "0x1"/,
    ],
    [
      ['--shard-index', ' 1'],
      /'--shard-index <i>' argument ' 1' is invalid\. expected an integer in plain decimal digits, got " 1"/,
    ],
    [['--shard-index', '1e3'], /expected an integer in plain decimal digits, got "1e3"/],
    [
      ['--request-count', '1.0'],
      /'--request-count <n>' argument '1\.0' is invalid\. expected an integer in plain decimal digits/,
    ],
    [
      ['--concurrency', '1,0x2'],
      /'--concurrency <n\[,n…\]>' argument '1,0x2' is invalid\. expected an integer in plain decimal digits, got "0x2"/,
    ],
    [
      ['--request-rate', '0x10'],
      /'--request-rate <r\[,r…\]>' argument '0x10' is invalid\. expected a number in plain decimal notation, got "0x10"/,
    ],
    [['--prewarm-connections', '0x1'], /'--prewarm-connections <n\|auto>' argument '0x1' is invalid/],
    [
      ['--simulator-option', 'port=1e3'],
      /argument 'port=1e3' is invalid\. port: expected an integer in plain decimal digits, got "1e3"/,
    ],
    [
      ['--goodput', 'time_to_first_token:0x10'],
      /--goodput item "time_to_first_token:0x10": expected tag:value with a value >= 0 in plain decimal notation/,
    ],
  ];
  for (const [extra, message] of cases) {
    const r = await tokenload([...PROFILE, '--shard-count', '2', '--concurrency', '2', ...extra]);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, extra.join(' '));
  }
  // Commands whose options are not schema-derived parse the same way.
  const analyze = await tokenload(['analyze-trace', '--isl-block-size', '0x10', 'trace.jsonl']);
  assert.equal(analyze.code, 2, analyze.stderr);
  assert.match(
    analyze.stderr,
    /'--isl-block-size <n>' argument '0x10' is invalid\. expected an integer >= 1, got "0x10"/,
  );
  // And a string in a -f config file, as typed text.
  const dir = freshDir();
  const file = join(dir, 'run.yaml');
  writeFileSync(file, 'shard-index: " 1"\nshard-count: 2\nconcurrency: 2\n');
  const fromFile = await tokenload([...PROFILE, '-f', file]);
  assert.equal(fromFile.code, 2, fromFile.stderr);
  assert.match(
    fromFile.stderr,
    new RegExp(`--config ${file}: key "shard-index": expected an integer in plain decimal digits, got " 1"`),
  );
});

test('--start-at on a date that does not exist (February 30, hour 24, month 13) is refused, not rolled over', async () => {
  const cases: Array<[string, string]> = [
    ['2026-02-30T00:00:00Z', 'February 2026 has no day 30 (it has 28)'],
    ['2026-13-01T00:00:00Z', 'there is no month 13'],
    ['2026-01-01T24:00:00Z', '24:00:00 is not a time of day'],
    ['2026-01-01T00:00:00+25:00', '+25:00 is not a zone offset'],
  ];
  for (const [time, why] of cases) {
    const r = await tokenload([...PROFILE, '--start-at', time]);
    assert.equal(r.code, 2, `${time}: ${r.stderr}`);
    assert.ok(
      r.stderr.includes(
        `'--start-at <time>' argument '${time}' is invalid. expected an ISO 8601 time with a zone (2025-06-01T12:00:00Z) or epoch milliseconds, got "${time}": ${why}`,
      ),
      r.stderr,
    );
  }
  // February 29 of a leap year is a date: refused only for being too far ahead.
  const leap = await tokenload([...PROFILE, '--start-at', '2028-02-29T00:00:00Z']);
  assert.match(leap.stderr, /--start-at 2028-02-29T00:00:00\.000Z is [\d.]+ h ahead/);
});

test('a corrupt calibration file is named in a warning (the rate check is skipped), not ignored', async () => {
  const home = freshDir();
  mkdirSync(join(home, '.cache', 'tokenload'), { recursive: true });
  const file = join(home, '.cache', 'tokenload', 'calibration.json');
  const run = ['profile', '--simulator', '-m', 'm', '--tokenizer', 'builtin', '--request-rate', '50'];
  run.push('--request-count', '1', '--ui', 'none', '--client-warmup-ms', '0', '--no-server-metrics');
  const cases: Array<[string, RegExp]> = [
    [
      '{"schemaVersion": 2, "measuredAt": "x", "maxRequestRatePerS": "fast", "rateSteps": []}',
      /not a calibration file of tokenload calibrate: field maxRequestRatePerS: expected a number, got "fast"/,
    ],
    ['{"schemaVersion": 2,', /not JSON \(/],
  ];
  for (const [content, what] of cases) {
    writeFileSync(file, content);
    const r = await runCliProcess([...run, '--artifact-dir', join(home, 'out')], {
      ...process.env,
      HOME: home,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`\\[tokenload\\] warning: ${file}: ${what.source}`));
    assert.match(
      r.stderr,
      /the --request-rate check against this machine’s calibration is skipped; rerun tokenload calibrate/,
    );
  }
});
