/**
 * AIPerf's `aiperf profile` options, walked from the one table (src/cli/aiperf-options.ts) through
 * the real CLI: `profile --help` lists each option tokenload takes under AIPerf's name, every alias
 * gives the configuration tokenload's own flag gives (the exported parse path the CLI uses), an
 * option accepted with no effect changes nothing and refuses any other value, every refused one
 * exits 2 with its reason, and the table of docs/aiperf.md says the same as the table.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { aiperfRow } from '../../scripts/docs-flags.js';
import { AIPERF_OPTIONS, type AiperfOption } from '../../src/cli/aiperf-options.js';
import { main } from '../../src/cli/main.js';
import { parseProfileArgs } from '../../src/cli/profile-command.js';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { ConfigError } from '../../src/errors.js';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

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

/** A configuration without the recorded command line (which names the flags as typed). */
function configOf(args: string[]): Omit<ProfileConfig, 'commandLine'>[] {
  return parseProfileArgs(args).map(({ commandLine: _line, ...rest }) => rest);
}

/** Arguments every parse starts with; without `-m` when the option under test sets the model. */
const baseArgs = (ours?: string): string[] => [
  '--random-seed',
  '7',
  ...(ours === '--model' ? [] : ['-m', 'm']),
];

const rowsOf = <K extends AiperfOption['status']['kind']>(kind: K) =>
  AIPERF_OPTIONS.filter(
    (o): o is AiperfOption & { status: Extract<AiperfOption['status'], { kind: K }> } =>
      o.status.kind === kind,
  );

test('the table names each AIPerf flag once', () => {
  const flags = AIPERF_OPTIONS.map((o) => o.flag);
  assert.deepEqual(
    flags.filter((f, i) => flags.indexOf(f) !== i),
    [],
  );
});

test('profile --help: every option of the same name is there, and every alias beside its option', async () => {
  const { code, text } = await captured(process.stdout, ['profile', '--help']);
  assert.equal(code, 0);
  for (const row of rowsOf('same')) {
    const listed = new RegExp(`(^|[\\s,])${row.flag}[\\s,]`, 'm').test(text);
    assert.ok(listed, `${row.flag}: the table says tokenload takes it under the same name; --help lacks it`);
  }
  for (const row of rowsOf('alias')) {
    const line = text.split('\n').find((l) => new RegExp(`^\\s+(-\\w, )?${row.status.ours} `).test(l)) ?? '';
    assert.match(line, /\(AIPerf: [^)]*\)/, `${row.status.ours} has no AIPerf names in --help`);
    assert.ok(line.includes(row.flag), `${row.flag} is not listed beside ${row.status.ours}: ${line}`);
  }
});

test('every alias gives the configuration of tokenload’s own flag, and changes it', () => {
  for (const row of rowsOf('alias')) {
    const tail = row.example ?? [];
    const base = baseArgs(row.status.ours);
    const viaAlias = configOf([...base, row.flag, ...tail]);
    assert.deepEqual(viaAlias, configOf([...base, row.status.ours, ...tail]), row.flag);
    assert.notDeepEqual(viaAlias, configOf([...baseArgs(), ...tail.slice(1)]), `${row.flag} had no effect`);
    // The `--name=value` form maps too.
    if (tail.length > 0)
      assert.deepEqual(configOf([...base, `${row.flag}=${tail[0]}`, ...tail.slice(1)]), viaAlias, row.flag);
  }
});

test('an option accepted with no effect changes nothing; any other value is refused naming it', () => {
  const plain = configOf(baseArgs());
  for (const row of rowsOf('accepted')) {
    if (row.status.anyValue === true) {
      // Any value is taken and changes nothing, written after the flag or with `=`.
      for (const args of [[row.flag, 'DEBUG'], [`${row.flag}=TRACE`], [row.flag]])
        assert.deepEqual(configOf([...baseArgs(), ...args]), plain, row.flag);
      continue;
    }
    const value = row.status.value;
    const args = value === undefined ? [row.flag] : [row.flag, value];
    assert.deepEqual(configOf([...baseArgs(), ...args]), plain, row.flag);
    // A short flag takes no `=value` (`-v=x` is no way to write -v), so only long ones are tried so.
    if (value === undefined && !row.flag.startsWith('--')) continue;
    const other = value === undefined ? `${row.flag}=x` : [row.flag, 'something-else'];
    assert.throws(
      () => configOf([...baseArgs(), ...(Array.isArray(other) ? other : [other])]),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.option === row.flag &&
        err.message.startsWith(
          `${row.flag} ${value === undefined ? 'x' : 'something-else'} is AIPerf's option`,
        ),
      row.flag,
    );
  }
});

test('every refused option exits 2 with AIPerf’s name and tokenload’s reason, before anything runs', async () => {
  for (const row of rowsOf('refused')) {
    const { code, text } = await captured(process.stderr, ['profile', '-m', 'm', row.flag, 'value']);
    assert.equal(code, 2, row.flag);
    assert.equal(
      text,
      `error: ${row.flag} is AIPerf's option; tokenload does not take it: ${row.status.why}.\n`,
      row.flag,
    );
  }
});

test('a refused option is not one tokenload defines (else the table is stale: update it and run npm run docs:flags)', async () => {
  const { text } = await captured(process.stdout, ['profile', '--help']);
  const options = text.split('\nAIPerf')[0] ?? '';
  for (const row of [...rowsOf('refused'), ...rowsOf('accepted'), ...rowsOf('alias')]) {
    const defined = new RegExp(`(^|[\\s,])${row.flag}[\\s,]`, 'm').test(
      options.replace(/\(AIPerf: [^)]*\)/g, ''),
    );
    assert.ok(
      !defined,
      `${row.flag} is now an option of tokenload profile: mark it "same" in src/cli/aiperf-options.ts and run npm run docs:flags`,
    );
  }
});

test('AIPerf list options: several values after one flag', () => {
  const [c] = configOf([
    ...baseArgs(),
    '--extra-inputs',
    'temperature:0.5',
    'top_p:0.9',
    '-H',
    'X-A:1',
    'X-B:2',
    '--url',
    'a:1',
    'b:2',
    '--streaming',
  ]);
  assert.deepEqual(c?.extraInputs, { temperature: 0.5, top_p: 0.9 });
  assert.deepEqual(c?.headers, { 'X-A': '1', 'X-B': '2' });
  assert.deepEqual(c?.url, ['http://a:1', 'http://b:2']);
  assert.equal(c?.streaming, true);
  const [models] = configOf(['--model-names', 'a', 'b', '-m', 'c']);
  assert.deepEqual(models?.models, ['a', 'b', 'c']);
});

test('one option set under AIPerf’s name and tokenload’s is refused, not silently resolved', () => {
  assert.throws(
    () => configOf([...baseArgs(), '--isl', '100', '--synthetic-input-tokens-mean', '200']),
    /^ConfigError: --isl and --synthetic-input-tokens-mean \(AIPerf's name for --isl\) set the same option; give it once\.$/,
  );
});

test('-f config file: AIPerf names work as keys, and a refused one is refused naming file and key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-aiperf-config-'));
  const good = join(dir, 'good.yaml');
  writeFileSync(
    good,
    'synthetic-input-tokens-mean: 128\nurl-strategy: round_robin\nno-gpu-telemetry: true\n',
  );
  assert.deepEqual(configOf([...baseArgs(), '-f', good]), configOf([...baseArgs(), '--isl', '128']));
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'public-dataset: sharegpt\n');
  assert.throws(
    () => configOf([...baseArgs(), '-f', bad]),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message.startsWith(
        `--config ${bad}:1: key "public-dataset": --public-dataset sharegpt is AIPerf's option`,
      ),
  );
});

test('the docs/aiperf.md table lists every AIPerf option with the status the CLI applies', () => {
  const page = readFileSync(join(PROJECT_ROOT, 'docs', 'aiperf.md'), 'utf8');
  const missing = AIPERF_OPTIONS.map(aiperfRow).filter((line) => !page.includes(`${line}\n`));
  assert.deepEqual(
    missing,
    [],
    'docs/aiperf.md rows out of date (run npm run docs:flags; expected lines shown)',
  );
});

/** The reason or note a row shows the user. */
const reasonOf = (o: AiperfOption): string => {
  const s = o.status;
  if (s.kind === 'refused' || s.kind === 'accepted') return s.why;
  return s.note ?? '';
};

test('every command and flag a reason points the user to exists in tokenload', async () => {
  const top = (await captured(process.stdout, ['--help'])).text;
  const commands = new Set([...top.matchAll(/^ {2}([a-z][a-z-]+)[ \n]/gm)].map((m) => m[1]));
  const helps = new Map<string, string>();
  const helpOf = async (command: string): Promise<string> => {
    if (!helps.has(command)) helps.set(command, (await captured(process.stdout, [command, '--help'])).text);
    return helps.get(command) as string;
  };
  const stale: string[] = [];
  for (const row of AIPERF_OPTIONS) {
    const reason = reasonOf(row);
    // `tokenload report compare` names a command `report compare`: a bare word after the command
    // is taken as part of its name (no command of tokenload has subcommands).
    const named = [...reason.matchAll(/`tokenload ([a-z-]+(?: [a-z][a-z-]*)*)/g)].map((m) => m[1] as string);
    for (const command of named) if (!commands.has(command)) stale.push(`${row.flag}: tokenload ${command}`);
    const texts = await Promise.all(['profile', ...named.filter((c) => commands.has(c))].map(helpOf));
    for (const [flag] of reason.matchAll(/--[a-z][a-z0-9-]*/g)) {
      const listed = texts.some((t) => new RegExp(`(^|[\\s,])${flag}[\\s,=]`, 'm').test(t));
      if (!listed) stale.push(`${row.flag}: ${flag}`);
    }
  }
  assert.deepEqual(stale, [], 'reasons naming a command or flag tokenload does not have');
});

test('an AIPerf value tokenload does not take is refused with the hint the docs/aiperf.md row gives', async () => {
  const { code, text } = await captured(process.stderr, [
    'profile',
    '-m',
    'm',
    '--benchmark-grace-period',
    'inf',
  ]);
  assert.equal(code, 2);
  assert.match(
    text,
    /expected a number, got "inf"\. AIPerf’s `inf` is not taken: give a large number of seconds\./,
  );
  const row = AIPERF_OPTIONS.find((o) => o.flag === '--benchmark-grace-period');
  assert.ok(row !== undefined && reasonOf(row).includes('AIPerf’s `inf` is not taken: give a large number'));
});

test('a switch given a value is refused naming the switch (exit 2), with a hint for --server-timing vllm', async () => {
  const timing = await captured(process.stderr, ['profile', '-m', 'm', '--server-timing', 'vllm']);
  assert.equal(timing.code, 2);
  assert.match(
    timing.text,
    /--server-timing takes no value, but "vllm" follows it; .*--simulator-option server-timing=vllm/,
  );
  const streaming = await captured(process.stderr, ['profile', '-m', 'm', '--streaming', 'true']);
  assert.equal(streaming.code, 2);
  assert.match(streaming.text, /--streaming takes no value, but "true" follows it\./);
  const inline = await captured(process.stderr, ['profile', '-m', 'm', '--server-timing=vllm']);
  assert.equal(inline.code, 2);
  assert.match(
    inline.text,
    /--server-timing takes no value, but "--server-timing=vllm" gives it one; .*server-timing=vllm/,
  );
  assert.equal(parseProfileArgs(['-m', 'm', '--streaming', '--server-timing']).length, 1);
});

test('--server-timing is refused for an endpoint whose body has no include_metrics field, naming it', () => {
  for (const type of ['embeddings', 'responses', 'messages']) {
    assert.throws(
      () => parseProfileArgs(['-m', 'm', '--endpoint-type', type, '--server-timing']),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message.includes(`an --endpoint-type ${type} request has no such field`),
      type,
    );
  }
  for (const type of ['chat', 'completions'])
    assert.equal(
      parseProfileArgs(['-m', 'm', '--endpoint-type', type, '--server-timing'])[0]?.serverTiming,
      true,
    );
});
