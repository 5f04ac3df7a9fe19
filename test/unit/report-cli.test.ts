/**
 * The report and trace commands as a user runs them: what they print and their exit codes. The
 * commands are registered on a fresh commander program, as `src/cli/main.ts` does.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Command, CommanderError } from 'commander';
import { registerAnalyzeCommands } from '../../src/cli/analyze-action.js';
import { registerReportCommands } from '../../src/cli/report-action.js';

interface CliResult {
  code: number;
  out: string;
  err: string;
}

async function runCli(args: string[]): Promise<CliResult> {
  let code = 0;
  let out = '';
  let err = '';
  const io = {
    out: (t: string): void => {
      out += t;
    },
    err: (t: string): void => {
      err += t;
    },
  };
  const setExit = (c: number): void => {
    code = c;
  };
  const program = new Command('tokenload').exitOverride().configureOutput({ writeErr: () => undefined });
  registerReportCommands(program, setExit, io);
  registerAnalyzeCommands(program, setExit, io);
  try {
    await program.parseAsync(['node', 'tokenload', ...args]);
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    code = 2;
  }
  return { code, out, err };
}

function runDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-report-cli-'));
  const t0 = 1_795_978_732_000_000_000n;
  const lines = [0n, 1n, 2n].map(
    (i) =>
      `{"metadata":{"session_num":0,"conversation_id":"a","turn_index":${i},"request_type":null,"request_scheduled_ns":null,"request_start_ns":${t0 + i * 1_000_000_000n},"request_ack_ns":null,"request_end_ns":${t0 + i * 1_000_000_000n + 300_000_000n},"was_cancelled":false},"metrics":{"time_to_first_token":{"value":${10 + Number(i)},"unit":"ms"},"request_latency":{"value":300,"unit":"ms"},"output_sequence_length":{"value":20,"unit":"tokens"}},"error":null}`,
  );
  writeFileSync(join(dir, 'profile_export.jsonl'), `${lines.join('\n')}\n`);
  return dir;
}

test('report DIR writes report.html and prints its path, size and build time', async () => {
  const dir = runDir();
  const r = await runCli(['report', dir]);
  assert.equal(r.code, 0, r.err);
  assert.match(
    r.out,
    new RegExp(`^Report: ${join(dir, 'report.html')} \\([\\d.]+ MB, built in \\d+ ms\\)\\n$`),
  );
  assert.ok(existsSync(join(dir, 'report.html')));
});

test('report on a directory without artifacts exits 1 with one error line', async () => {
  const r = await runCli(['report', mkdtempSync(join(tmpdir(), 'tokenload-empty-'))]);
  assert.equal(r.code, 1);
  assert.match(r.err, /^error: .*no profile_export\.jsonl here/);
});

test('plot DIR writes PNGs into DIR/plots and lists them', async () => {
  const dir = runDir();
  const r = await runCli(['plot', dir, '--width', '400', '--height', '300', '--scale', '1']);
  assert.equal(r.code, 0, r.err);
  const files = readdirSync(join(dir, 'plots')).sort();
  assert.ok(files.includes('ttft-over-time.png') && files.includes('ttft-by-turn.png'), files.join());
  assert.match(r.out, new RegExp(`${files.length} plots in ${join(dir, 'plots')}`));
  assert.equal((await runCli(['plot', dir, '--width', 'wide'])).code, 2);
});

test('compare needs two directories; with two it prints the table and writes --output', async () => {
  const a = runDir();
  assert.equal((await runCli(['compare', a])).code, 2);
  const out = join(a, 'cmp.html');
  const r = await runCli(['compare', a, runDir(), '--output', out]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /tokenload \| Compare \(baseline A\)/);
  assert.match(r.out, /TTFT p50 \(ms\) .* 11\.00 .* 11\.00 .* 0\.00 .* 1\.00x/);
  assert.match(r.out, new RegExp(`Comparison page: ${out}`));
  assert.ok(existsSync(out));
});

test('analyze-trace prints text or JSON; a bad type is a usage error; a missing file exits 1', async () => {
  const trace = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
  const text = await runCli(['analyze-trace', trace, '--custom-dataset-type', 'bailian_trace']);
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /Rows: 40 {3}Sessions: 26/);
  const json = await runCli(['analyze-trace', trace, '--custom-dataset-type', 'bailian_trace', '--json']);
  const parsed = JSON.parse(json.out) as { rows: number; prefix: { blockHitRatio: number } };
  assert.equal(parsed.rows, 40);
  assert.ok(parsed.prefix.blockHitRatio > 0);
  assert.equal((await runCli(['analyze-trace', trace, '--custom-dataset-type', 'nope'])).code, 2);
  const missing = await runCli([
    'analyze-trace',
    '/nonexistent.jsonl',
    '--custom-dataset-type',
    'mooncake_trace',
  ]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /cannot open trace file/);
});

test('synthesize-trace writes the rescaled trace and says what it did', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'tokenload-syn-')), 'fast.jsonl');
  const r = await runCli([
    'synthesize-trace',
    'examples/traces/bailian_traceA_stratified_head24.jsonl',
    '--custom-dataset-type',
    'bailian_trace',
    '--output',
    out,
    '--synthesis-speedup-ratio',
    '10',
    '--synthesis-max-osl',
    '100',
  ]);
  assert.equal(r.code, 0, r.err);
  assert.match(
    r.out,
    /^24 of 24 rows written to .*fast\.jsonl; \d+ output lengths capped at --synthesis-max-osl\n$/,
  );
  const again = await runCli(['analyze-trace', out, '--custom-dataset-type', 'bailian_trace']);
  assert.match(again.out, /Time span: 2\.8 s/);
});

test('synthesize-trace stopped by a bad row writes nothing: no partial output, an earlier output kept, no temporary file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-syn-bad-'));
  const row = (chat: number, ids: string): string =>
    `{"chat_id": ${chat}, "parent_chat_id": -1, "timestamp": ${chat}, "input_length": 32, "output_length": 4, "type": "text", "turn": 1, "hash_ids": [${ids}]}`;
  const source = join(dir, 'late_bad.jsonl');
  writeFileSync(source, `${[row(1, '0, 1'), row(2, '2, 3'), row(3, '1, 1.5'), row(4, '4, 5')].join('\n')}\n`);
  const args = ['synthesize-trace', source, '--custom-dataset-type', 'bailian_trace', '--output'];
  const fresh = await runCli([...args, join(dir, 'fresh.jsonl')]);
  assert.equal(fresh.code, 1);
  assert.match(fresh.err, /late_bad\.jsonl:3: field "hash_ids\[1\]"/);
  const earlier = join(dir, 'earlier.jsonl');
  writeFileSync(earlier, 'an earlier good trace\n');
  assert.equal((await runCli([...args, earlier])).code, 1);
  assert.equal(readFileSync(earlier, 'utf8'), 'an earlier good trace\n');
  assert.deepEqual(readdirSync(dir).sort(), ['earlier.jsonl', 'late_bad.jsonl']);
});

/** 64-bit hash ids and a twin trace with the same structure in small ids (A=1, B=2, C=3, D=4). */
const BIG_IDS = {
  A: '9007199254740992',
  B: '9007199254740993',
  C: '18446744073709551615',
  D: '18446744073709551614',
};
const SMALL_IDS = { A: '1', B: '2', C: '3', D: '4' };

/**
 * Rows [A,B,C], [A,B,C], [B,A,D], [A,B,D]: with exact ids the second row hits three blocks, the third
 * none (A and B differ only beyond 2^53), the fourth two (C and D too).
 */
function idTrace(ids: Record<'A' | 'B' | 'C' | 'D', string>): string {
  const rows = ['A,B,C', 'A,B,C', 'B,A,D', 'A,B,D'].map((layout, i) => {
    const hashIds = layout
      .split(',')
      .map((k) => ids[k as 'A'])
      .join(', ');
    return `{"chat_id": ${i + 1}, "parent_chat_id": -1, "timestamp": ${i}, "input_length": 48, "output_length": 4, "type": "text", "turn": 1, "hash_ids": [${hashIds}]}`;
  });
  const file = join(mkdtempSync(join(tmpdir(), 'tokenload-ids-')), 'trace.jsonl');
  writeFileSync(file, `${rows.join('\n')}\n`);
  return file;
}

async function prefixOf(file: string): Promise<Record<string, number>> {
  const r = await runCli(['analyze-trace', file, '--custom-dataset-type', 'bailian_trace', '--json']);
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { prefix: Record<string, number> }).prefix;
}

test('analyze-trace: 64-bit hash ids hit exactly as small ids of the same structure; a 65-bit id exits 1', async () => {
  const big = await prefixOf(idTrace(BIG_IDS));
  assert.deepEqual(big, await prefixOf(idTrace(SMALL_IDS)));
  assert.ok((big.hitBlocks ?? 0) > 0 && (big.hitBlocks ?? 0) < (big.totalBlocks ?? 0), JSON.stringify(big));
  const tooBig = idTrace({ ...BIG_IDS, A: '18446744073709551616' });
  const r = await runCli(['analyze-trace', tooBig, '--custom-dataset-type', 'bailian_trace']);
  assert.equal(r.code, 1);
  assert.match(
    r.err,
    /trace\.jsonl:1: field "hash_ids\[0\]": .*got 18446744073709551616 \(more than 64 bits\)/,
  );
});

test('synthesize-trace writes 64-bit hash ids back digit for digit, and keeps their prefix structure when scaled', async () => {
  const source = idTrace(BIG_IDS);
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-syn-ids-'));
  const fast = join(dir, 'fast.jsonl');
  const args = ['--custom-dataset-type', 'bailian_trace', '--output'];
  const r = await runCli(['synthesize-trace', source, ...args, fast, '--synthesis-speedup-ratio', '2']);
  assert.equal(r.code, 0, r.err);
  const idsText = (file: string): string[] =>
    readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => /"hash_ids": ?\[([^\]]*)\]/.exec(l)?.[1]?.replaceAll(' ', '') ?? '');
  assert.deepEqual(idsText(fast), idsText(source));
  assert.deepEqual(await prefixOf(fast), await prefixOf(source));
  const scaled = async (file: string, name: string): Promise<Record<string, number>> => {
    const out = join(dir, name);
    const s = await runCli([
      'synthesize-trace',
      file,
      ...args,
      out,
      '--synthesis-prompt-len-multiplier',
      '2',
      '--synthesis-prefix-len-multiplier',
      '2',
    ]);
    assert.equal(s.code, 0, s.err);
    return prefixOf(out);
  };
  assert.deepEqual(await scaled(source, 'big2x.jsonl'), await scaled(idTrace(SMALL_IDS), 'small2x.jsonl'));
});

test('analyze-trace warns naming a Bailian row whose parent comes later, and counts it as its own session', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'tokenload-links-')), 'links.jsonl');
  const row = (chat: number, parent: number, ts: number): string =>
    `{"chat_id": ${chat}, "parent_chat_id": ${parent}, "timestamp": ${ts}, "input_length": 20, "output_length": 4, "turn": ${parent === -1 ? 1 : 2}, "hash_ids": [1]}`;
  writeFileSync(file, `${[row(1, -1, 0), row(2, 3, 1), row(3, -1, 2), row(4, 1, 3)].join('\n')}\n`);
  const r = await runCli(['analyze-trace', file, '--custom-dataset-type', 'bailian_trace']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /Rows: 4 {3}Sessions: 3/);
  assert.match(
    r.out,
    /\nWarning: 1 row names a parent_chat_id that is not an earlier row stamped no later, .*: chat_id 2 \(line 2\): its parent 3 comes later in the file\n/,
  );
});

test('analyze-trace: a repeated chat_id with parent -1 is a session of its own, named in one warning', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'tokenload-dup-')), 'dup.jsonl');
  const row = (chat: number, parent: number, ts: number): string =>
    `{"chat_id": ${chat}, "parent_chat_id": ${parent}, "timestamp": ${ts}, "input_length": 20, "output_length": 4, "turn": ${parent === -1 ? 1 : 2}, "hash_ids": [1]}`;
  writeFileSync(file, `${[row(1, -1, 0), row(1, -1, 1), row(2, 1, 2)].join('\n')}\n`);
  const r = await runCli(['analyze-trace', file, '--custom-dataset-type', 'bailian_trace']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /Rows: 3 {3}Sessions: 2/);
  assert.match(r.out, /\nWarning: 1 row repeats an earlier row's chat_id \(.*\): chat_id 1 \(line 2\)\n/);
  const json = await runCli(['analyze-trace', file, '--custom-dataset-type', 'bailian_trace', '--json']);
  const skipped = (JSON.parse(json.out) as { skipped: { repeatedChatIds: unknown } }).skipped;
  assert.deepEqual(skipped.repeatedChatIds, { count: 1, rows: [{ line: 2, chatId: '1' }] });
});

test('analyze-trace --synthesis-*: the trace a replay with them sends; a parent over --synthesis-max-isl is named; other formats refuse them', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'tokenload-syn-analyze-')), 'trace.jsonl');
  const row = (chat: number, parent: number, ts: number, isl: number): string =>
    `{"chat_id": ${chat}, "parent_chat_id": ${parent}, "timestamp": ${ts}, "input_length": ${isl}, "output_length": 40, "turn": ${parent === -1 ? 1 : 2}, "hash_ids": [${Array.from({ length: Math.ceil(isl / 16) }, (_v, i) => chat * 100 + i).join(', ')}]}`;
  // Chat 2 follows chat 1, which is over the max ISL; chat 3 is alone.
  writeFileSync(file, `${[row(1, -1, 0, 64), row(2, 1, 1, 32), row(3, -1, 2, 16)].join('\n')}\n`);
  const args = ['analyze-trace', file, '--custom-dataset-type', 'bailian_trace'];
  const r = await runCli([...args, '--synthesis-max-isl', '40', '--synthesis-max-osl', '30']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /Rows: 2 {3}Sessions: 2/);
  assert.match(
    r.out,
    /\nSynthesis: 1 rows over --synthesis-max-isl dropped, 2 output lengths capped at --synthesis-max-osl\n/,
  );
  assert.match(r.out, /chat_id 2 \(line 2\): its parent 1 was dropped by --synthesis-max-isl/);
  assert.match(r.out, /│ OSL +│ +30 │(?: +30 │){4} 30\.0 │ +2 │/);
  // No hash id of this trace occurs twice: no row has a shared prefix to stretch, and the rest of
  // each row is the prompt-len multiplier's, so the prefix-len multiplier leaves the prompts as they are.
  const tokensWith = async (...flags: string[]): Promise<number> => {
    const j = await runCli([...args, ...flags, '--json']);
    assert.equal(j.code, 0, j.err);
    return (JSON.parse(j.out) as { prefix: { totalTokens: number } }).prefix.totalTokens;
  };
  assert.equal(await tokensWith('--synthesis-prefix-len-multiplier', '2'), await tokensWith());
  assert.ok((await tokensWith('--synthesis-prompt-len-multiplier', '2')) > (await tokensWith()));
  const other = await runCli([
    'analyze-trace',
    file,
    '--custom-dataset-type',
    'single_turn',
    '--synthesis-max-osl',
    '30',
  ]);
  assert.equal(other.code, 2);
  assert.match(
    other.err,
    /--synthesis-max-osl applies to a --custom-dataset-type bailian_trace or mooncake_trace/,
  );
});

test('a rounded id is shown as the file writes it: 9.007199254740993e15, not the double it reads as', async () => {
  const ids = { ...SMALL_IDS, C: '9.007199254740993e15' };
  const r = await runCli(['analyze-trace', idTrace(ids), '--custom-dataset-type', 'bailian_trace']);
  assert.equal(r.code, 1);
  assert.match(r.err, /trace\.jsonl:1: field "hash_ids\[2\]": .*, got 9\.007199254740993e15 \(beyond 2\^53/);
  const file = join(mkdtempSync(join(tmpdir(), 'tokenload-rounded-')), 'chat.jsonl');
  writeFileSync(
    file,
    '{"chat_id": 1e19, "parent_chat_id": -1, "timestamp": 0, "input_length": 20, "output_length": 4, "turn": 1}\n',
  );
  const chat = await runCli(['analyze-trace', file, '--custom-dataset-type', 'bailian_trace']);
  assert.equal(chat.code, 1);
  assert.match(chat.err, /chat\.jsonl:1: field "chat_id": expected an integer, got 1e19 \(beyond 2\^53/);
});
