/**
 * Runs every AIPerf documented `aiperf profile` command (test/fixtures/aiperf-docs/commands.json)
 * as `tokenload profile` with the built CLI (bin/tokenload.js) against one shared `tokenload
 * simulate` server, and classifies each:
 *
 * - `works`: exit 0, and when the row states a count, profile_export.jsonl's records and the
 *   summary's request_count both equal it;
 * - `wrong-count`: exit 0 with another count;
 * - `refused`: exit 2 with tokenload's refusal of an AIPerf option (the detail names it);
 * - `unknown-flag`: exit 2 on an option tokenload does not know;
 * - `failed`: another non-zero exit (the detail is the first error line);
 * - `timeout`: still running at the wall timeout (`--timeout-s`, default 30), then killed;
 * - `needs-file`: it reads a file its page does not write.
 *
 *     npm run conformance -- [--out DIR] [--timeout-s S] [--jobs N] [--only TEXT] [--update-expect]
 *
 * Prints a table (page, index, class, detail) and the totals, and writes conformance.md and
 * conformance.json to DIR (default ./conformance). `--only` runs the rows whose `page#index` contains
 * TEXT. The runs are offline: each uses `--tokenizer builtin:qwen3` in place of the tokenizer its
 * command names or implies (`--keep-tokenizer` runs them as written). `--update-expect` writes each run row's class into commands.json where the row already has an
 * `expect.class`, so the conformance test follows fixes after a merge.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type Classified,
  COMMANDS_FILE,
  classify,
  type DocCommand,
  loadCommands,
  OFFLINE_TOKENIZER,
  prepareCommand,
  rowName,
  SIMULATOR_ARGS,
} from '../test/helpers/aiperf-docs.js';

const CLI = join(import.meta.dirname, '..', 'bin', 'tokenload.js');

/** Every child this runner started and has not seen end: killed when the runner is stopped. */
const children = new Set<ChildProcess>();

function killAll(): void {
  for (const child of children) {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(child.spawnargs.includes('simulate') ? child.pid : -child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

/** One row's result. */
interface RowResult extends Classified {
  page: string;
  index: number;
  seconds: number;
}

/** Starts `tokenload simulate` on a free loopback port; resolves with its URL once it listens. */
function startSimulator(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'simulate', '--port', '0', ...SIMULATOR_ARGS], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (b: Buffer): void => {
      seen += b.toString('utf8');
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m?.[1] !== undefined) resolve({ url: m[1], child });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`simulator exited (${code}): ${seen}`)));
  });
}

/** Runs one row in a temporary folder of its own and classifies it. */
async function runRow(
  row: DocCommand,
  url: string,
  timeoutS: number,
  tokenizer: string | null,
): Promise<RowResult> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-conformance-'));
  const started = Date.now();
  const base = { page: row.page, index: row.index };
  try {
    const prepared = prepareCommand(row, url, dir, tokenizer);
    if (prepared.kind === 'needs-file') {
      return { ...base, class: 'needs-file', detail: prepared.detail, seconds: 0 };
    }
    const run = await spawnBounded(prepared.args, prepared.env, dir, timeoutS);
    const result = classify(row, { ...run, dir });
    const notes = prepared.notes.length > 0 ? ` [${prepared.notes.join(', ')}]` : '';
    return { ...base, ...result, detail: result.detail + notes, seconds: (Date.now() - started) / 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the CLI with `args` in `cwd`; kills its process group at the wall timeout. */
function spawnBounded(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  timeoutS: number,
): Promise<{ code: number | null; stderr: string; timedOut: boolean }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...process.env, HF_HUB_OFFLINE: '1', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    if (stderr.length < 64_000) stderr += b.toString('utf8');
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  }, timeoutS * 1000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stderr, timedOut });
    }),
  );
}

/** Runs `rows` `jobs` at a time, in corpus order. */
async function runAll(
  rows: DocCommand[],
  url: string,
  timeoutS: number,
  jobs: number,
  tokenizer: string | null,
): Promise<RowResult[]> {
  const results: RowResult[] = new Array(rows.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const i = next++;
      const row = rows[i]!;
      results[i] = await runRow(row, url, timeoutS, tokenizer);
      const r = results[i]!;
      console.error(`${rowName(row)}: ${r.class} (${r.seconds.toFixed(1)} s) ${r.detail}`);
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  return results;
}

/** Counts of each class, overall and per page. */
function totals(results: RowResult[]): {
  byClass: Record<string, number>;
  byPage: Record<string, Record<string, number>>;
} {
  const byClass: Record<string, number> = {};
  const byPage: Record<string, Record<string, number>> = {};
  for (const r of results) {
    byClass[r.class] = (byClass[r.class] ?? 0) + 1;
    const page = byPage[r.page] ?? {};
    byPage[r.page] = page;
    page[r.class] = (page[r.class] ?? 0) + 1;
  }
  return { byClass, byPage };
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The Markdown report: totals, totals per page, then one line per command. */
function markdown(results: RowResult[], commit: string, tokenizer: string | null): string {
  const { byClass, byPage } = totals(results);
  const lines = [
    '# AIPerf documented commands run by tokenload',
    '',
    `${results.length} commands from AIPerf's docs at ${commit}, run by \`npm run conformance\` against the simulator, offline, ` +
      (tokenizer === null
        ? 'tokenizers as written.'
        : `with \`--tokenizer ${tokenizer}\` in place of the tokenizer a command names or implies.`),
    '',
    '| class | commands |',
    '| --- | --- |',
    ...Object.entries(byClass).map(([c, n]) => `| ${c} | ${n} |`),
    '',
    '| page | classes |',
    '| --- | --- |',
    ...Object.entries(byPage).map(
      ([p, c]) =>
        `| ${p} | ${Object.entries(c)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')} |`,
    ),
    '',
    '| page | index | class | detail |',
    '| --- | --- | --- | --- |',
    ...results.map((r) => `| ${r.page} | ${r.index} | ${r.class} | ${cell(r.detail)} |`),
  ];
  return lines.join('\n') + '\n';
}

/** Writes the new classes into commands.json for rows that already have an `expect.class`. */
function updateExpect(all: DocCommand[], results: RowResult[]): number {
  const byName = new Map(results.map((r) => [`${r.page}#${r.index}`, r]));
  let changed = 0;
  for (const row of all) {
    const r = byName.get(rowName(row));
    if (r === undefined || row.expect?.class === undefined || row.expect.class === r.class) continue;
    row.expect.class = r.class;
    changed++;
  }
  writeFileSync(COMMANDS_FILE, JSON.stringify(all, null, 2) + '\n');
  return changed;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: 'conformance' },
      'timeout-s': { type: 'string', default: '30' },
      jobs: { type: 'string', default: '2' },
      only: { type: 'string' },
      'update-expect': { type: 'boolean', default: false },
      'keep-tokenizer': { type: 'boolean', default: false },
    },
  });
  const all = loadCommands();
  const rows = all.filter((r) => values.only === undefined || rowName(r).includes(values.only));
  const sim = await startSimulator();
  try {
    const tokenizer = values['keep-tokenizer'] ? null : OFFLINE_TOKENIZER;
    const results = await runAll(rows, sim.url, Number(values['timeout-s']), Number(values.jobs), tokenizer);
    const report = markdown(results, all[0]?.commit ?? '?', tokenizer);
    console.log(report);
    mkdirSync(values.out, { recursive: true });
    writeFileSync(join(values.out, 'conformance.md'), report);
    const { byClass, byPage } = totals(results);
    const json = { commit: all[0]?.commit, byClass, byPage, results };
    writeFileSync(join(values.out, 'conformance.json'), JSON.stringify(json, null, 2) + '\n');
    if (values['update-expect'])
      console.error(`commands.json: ${updateExpect(all, results)} expect classes changed`);
  } finally {
    killAll();
  }
}

await main();
