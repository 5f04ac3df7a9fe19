/**
 * Runs every AIPerf documented `aiperf profile` command (test/fixtures/aiperf-docs/commands.json)
 * as `tokenload profile` with the built CLI (bin/tokenload.js) against `tokenload simulate` servers
 * (one for each distinct server a command's `--url` values name), and classifies each:
 *
 * - `works`: exit 0, and when the row states a count, profile_export.jsonl's records and the
 *   summary's request_count both equal it;
 * - `wrong-count`: exit 0 with another count;
 * - `long`: still running at the cap (`--cap-s`, default 20), it gets SIGINT as a user's Ctrl-C and
 *   exits 130 having sent requests, with no error records and its summary written (the detail has
 *   the counts; the table the duration the command itself asks for);
 * - `refused`: exit 2 with tokenload's refusal of an AIPerf option (the detail names it);
 * - `unknown-flag`: exit 2 on an option tokenload does not know;
 * - `fragment`: the page shows part of a command (`...`, no `--model`); it is run completed with
 *   `--model`, and the detail says what that gave;
 * - `failed`: another non-zero exit (the detail is the first error line), or a run stopped at the
 *   cap that does not meet `long`;
 * - `timeout`: still running `--grace-s` (default 30) after the SIGINT, then killed;
 * - `needs-file`: it reads a file its page does not show, of a format nothing in the command tells.
 *   A file whose format the command's `--custom-dataset-type` tells is written from the project's
 *   sample of that format (SAMPLES in test/helpers/aiperf-docs.ts), and the row says `supplied`.
 *
 *     npm run conformance -- [--out DIR] [--cap-s S] [--grace-s S] [--jobs N] [--only TEXT]
 *                            [--set-expect [--fast-s S] | --update-expect] [--keep-tokenizer] [--from FILE]
 *
 * Prints a table (page, index, class, seconds, the command's own duration, detail) and the totals,
 * and writes conformance.md and conformance.json to DIR (default ./conformance); a run of the whole
 * corpus also rewrites the summary section (totals by class and by page, the refusals with their
 * reasons) of test/fixtures/aiperf-docs/README.md. `--only` runs the rows whose `page#index`
 * contains TEXT. The runs are offline: each uses `--tokenizer builtin:qwen3` in place of the
 * tokenizer its command names or implies (`--keep-tokenizer` runs them as written).
 * `--set-expect` sets each run row's `expect` (and `supplied`) in commands.json so the conformance
 * test holds it: every row refused, a fragment, needing a file or an unknown flag, and every other
 * row that took under `--fast-s` seconds (default 5), never a `long` one; the other rows lose their
 * `expect`. `--update-expect` only rewrites rows that already have an `expect.class`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type Classified,
  COMMANDS_FILE,
  type ConformanceClass,
  classify,
  type DocCommand,
  loadCommands,
  OFFLINE_TOKENIZER,
  prepareCommand,
  rowName,
  SIMULATOR_ARGS,
  serverCount,
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
export interface RowResult extends Classified {
  page: string;
  index: number;
  seconds: number;
  /** The project's sample files the run used in place of files its page does not show. */
  supplied?: string[];
  /** How long the command says it runs (see expectedDuration). */
  expected?: string;
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

/** How the runner bounds a run: SIGINT at `capS`, SIGKILL `graceS` later. */
interface Bounds {
  capS: number;
  graceS: number;
}

/** Runs one row in a temporary folder of its own and classifies it. */
async function runRow(
  row: DocCommand,
  urls: readonly string[],
  bounds: Bounds,
  tokenizer: string | null,
): Promise<RowResult> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-conformance-'));
  const started = Date.now();
  const base = { page: row.page, index: row.index };
  try {
    const prepared = prepareCommand(row, urls, dir, tokenizer);
    if (prepared.kind === 'needs-file') {
      return { ...base, class: 'needs-file', detail: prepared.detail, seconds: 0 };
    }
    const run = await spawnBounded(prepared.args, prepared.env, dir, bounds);
    const result = classify(row, { ...run, dir }, prepared.fragment);
    const notes = prepared.notes.length > 0 ? ` [${prepared.notes.join(', ')}]` : '';
    return {
      ...base,
      ...result,
      detail: result.detail + notes,
      seconds: (Date.now() - started) / 1000,
      ...(prepared.supplied.length > 0 ? { supplied: prepared.supplied } : {}),
      ...(prepared.expected !== undefined ? { expected: prepared.expected } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the CLI with `args` in `cwd`, in a process group of its own. At the cap the group gets
 * SIGINT, as a terminal's Ctrl-C; a run still going `graceS` later is killed.
 */
function spawnBounded(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  bounds: Bounds,
): Promise<{ code: number | null; stderr: string; interrupted: boolean; timedOut: boolean }> {
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
  let interrupted = false;
  let timedOut = false;
  const signal = (sig: NodeJS.Signals): void => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, sig);
  };
  const cap = setTimeout(() => {
    interrupted = true;
    signal('SIGINT');
  }, bounds.capS * 1000);
  const kill = setTimeout(
    () => {
      timedOut = true;
      signal('SIGKILL');
    },
    (bounds.capS + bounds.graceS) * 1000,
  );
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(cap);
      clearTimeout(kill);
      children.delete(child);
      resolve({ code, stderr, interrupted, timedOut });
    }),
  );
}

/** Runs `rows` `jobs` at a time, in corpus order. */
async function runAll(
  rows: DocCommand[],
  urls: readonly string[],
  bounds: Bounds,
  jobs: number,
  tokenizer: string | null,
): Promise<RowResult[]> {
  const results: RowResult[] = new Array(rows.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const i = next++;
      const row = rows[i]!;
      results[i] = await runRow(row, urls, bounds, tokenizer);
      const r = results[i]!;
      console.error(`${rowName(row)}: ${r.class} (${r.seconds.toFixed(1)} s) ${r.detail}`);
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  return results;
}

/** What each class means, in the order tables list them. */
const CLASSES: Readonly<Record<ConformanceClass, string>> = {
  works: "exit 0; the page's stated request count (where it states one) in the records and the summary",
  'wrong-count': 'exit 0 with another count than the page states',
  long: 'still running at the cap; on SIGINT it exited 130 with requests sent, no error records and its summary written',
  refused: 'an AIPerf option tokenload refuses before anything runs (exit 2), with the reason',
  'unknown-flag': 'an option tokenload does not know (exit 2)',
  fragment:
    'not a whole command (`...`, no `--model`); run completed with `--model`, its outcome in the detail',
  failed: 'another non-zero exit; the detail is the first error line',
  timeout: 'did not end within the grace after SIGINT; killed',
  'needs-file': 'reads a file its page does not show, of a format nothing in the command tells',
};

/** Counts of each class, overall and per page; and how many of each used a sample file. */
function totals(results: readonly RowResult[]): {
  byClass: Record<string, number>;
  withSample: Record<string, number>;
  byPage: Record<string, Record<string, number>>;
} {
  const byClass: Record<string, number> = {};
  const withSample: Record<string, number> = {};
  const byPage: Record<string, Record<string, number>> = {};
  for (const r of results) {
    byClass[r.class] = (byClass[r.class] ?? 0) + 1;
    if (r.supplied !== undefined) withSample[r.class] = (withSample[r.class] ?? 0) + 1;
    const page = byPage[r.page] ?? {};
    byPage[r.page] = page;
    page[r.class] = (page[r.class] ?? 0) + 1;
  }
  return { byClass, withSample, byPage };
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The summary: totals by class, by page, and the refusals with their reasons. */
function summary(
  results: readonly RowResult[],
  commit: string,
  tokenizer: string | null,
  bounds: Bounds,
): string[] {
  const { byClass, withSample, byPage } = totals(results);
  const present = (Object.keys(CLASSES) as ConformanceClass[]).filter((c) => byClass[c] !== undefined);
  return [
    `${results.length} commands from AIPerf's docs at \`${commit.slice(0, 8)}\`, run by \`npm run conformance\` ` +
      `against \`tokenload simulate\` (one simulator for each distinct server a command names), offline, ` +
      (tokenizer === null
        ? 'tokenizers as written'
        : `with \`--tokenizer ${tokenizer}\` in place of the tokenizer a command names or implies`) +
      `; a run still going at ${bounds.capS} s gets SIGINT.`,
    '',
    '| class | commands | of them with a sample file | meaning |',
    '| --- | --: | --: | --- |',
    ...present.map((c) => `| ${c} | ${byClass[c]} | ${withSample[c] ?? 0} | ${CLASSES[c]} |`),
    `| total | ${results.length} | ${Object.values(withSample).reduce((a, b) => a + b, 0)} | |`,
    '',
    `| page | ${present.join(' | ')} |`,
    `| --- |${present.map(() => ' --: |').join('')}`,
    ...Object.entries(byPage)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([p, c]) => `| ${p} | ${present.map((k) => c[k] ?? '').join(' | ')} |`),
    '',
    ...refusals(results),
  ];
}

/** The refusals grouped by option and reason, each with the commands that hit it. */
function refusals(results: readonly RowResult[]): string[] {
  const groups = new Map<string, string[]>();
  for (const r of results) {
    if (r.class !== 'refused') continue;
    const key = r.detail.replace(/ \[.*\]$/, '');
    groups.set(key, [...(groups.get(key) ?? []), `${r.page.replace(/^docs\//, '')}#${r.index}`]);
  }
  const rows = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
  return [
    `Refusals (${results.filter((r) => r.class === 'refused').length} commands):`,
    '',
    '| option: reason | commands |',
    '| --- | --- |',
    ...rows.map(([reason, names]) => `| ${cell(reason)} | ${names.join(', ')} |`),
  ];
}

/** The Markdown report: the summary, then one line per command. */
function markdown(
  results: readonly RowResult[],
  commit: string,
  tokenizer: string | null,
  bounds: Bounds,
): string {
  const lines = [
    '# AIPerf documented commands run by tokenload',
    '',
    ...summary(results, commit, tokenizer, bounds),
    '',
    '| page | index | class | took (s) | the command says | detail |',
    '| --- | --: | --- | --: | --- | --- |',
    ...results.map(
      (r) =>
        `| ${r.page} | ${r.index} | ${r.class} | ${r.seconds.toFixed(1)} | ${r.expected ?? ''} | ${cell(r.detail)} |`,
    ),
  ];
  return lines.join('\n') + '\n';
}

const README = join(dirname(COMMANDS_FILE), 'README.md');
const BEGIN = '<!-- conformance summary: generated by npm run conformance; do not edit -->';
const END = '<!-- end of conformance summary -->';

/** Replaces the summary section of test/fixtures/aiperf-docs/README.md (appended the first time). */
function writeReadme(
  results: readonly RowResult[],
  commit: string,
  tokenizer: string | null,
  bounds: Bounds,
): void {
  const text = readFileSync(README, 'utf8');
  const section = [BEGIN, '', ...summary(results, commit, tokenizer, bounds), '', END].join('\n');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  const next =
    begin >= 0 && end > begin
      ? text.slice(0, begin) + section + text.slice(end + END.length)
      : `${text.trimEnd()}\n\n## Results\n\n${section}\n`;
  writeFileSync(README, next);
}

/** Writes the new classes into commands.json for rows that already have an `expect.class`. */
function updateExpect(all: DocCommand[], results: readonly RowResult[]): number {
  const byName = new Map(results.map((r) => [`${r.page}#${r.index}`, r]));
  let changed = 0;
  for (const row of all) {
    const r = byName.get(rowName(row));
    if (r === undefined || row.expect?.class === undefined) continue;
    if (row.expect.class !== r.class || row.expect.completed !== r.completed) changed++;
    setRow(row, r);
  }
  writeFileSync(COMMANDS_FILE, JSON.stringify(all, null, 2) + '\n');
  return changed;
}

/**
 * Sets `expect` (and `supplied`) of every run row: held by the test when it was refused, a
 * fragment, needs a file or took under `fastS` seconds, and not `long`; other rows lose their
 * `expect` (the runner alone runs them). `stated` is kept.
 */
function setExpect(all: DocCommand[], results: readonly RowResult[], fastS: number): number {
  const byName = new Map(results.map((r) => [`${r.page}#${r.index}`, r]));
  let held = 0;
  for (const row of all) {
    const r = byName.get(rowName(row));
    if (r === undefined) continue;
    const quick =
      ['refused', 'fragment', 'needs-file', 'unknown-flag'].includes(r.class) || r.seconds < fastS;
    if (quick && r.class !== 'long' && r.class !== 'timeout') {
      setRow(row, r);
      held++;
    } else {
      delete row.expect;
      if (r.supplied !== undefined) row.supplied = r.supplied;
      else delete row.supplied;
    }
  }
  writeFileSync(COMMANDS_FILE, JSON.stringify(all, null, 2) + '\n');
  return held;
}

function setRow(row: DocCommand, r: RowResult): void {
  row.expect = { class: r.class, ...(r.completed !== undefined ? { completed: r.completed } : {}) };
  if (r.supplied !== undefined) row.supplied = r.supplied;
  else delete row.supplied;
}

/** The results of `rows` in an earlier run's conformance.json (`--from`), in corpus order. */
function readResults(file: string, rows: readonly DocCommand[]): RowResult[] {
  const byName = new Map(
    (JSON.parse(readFileSync(file, 'utf8')) as { results: RowResult[] }).results.map((r) => [
      `${r.page}#${r.index}`,
      r,
    ]),
  );
  return rows.flatMap((row) => byName.get(rowName(row)) ?? []);
}

/** Starts `n` simulators, one after another. */
async function startSimulators(n: number): Promise<string[]> {
  const urls: string[] = [];
  for (let i = 0; i < n; i++) urls.push((await startSimulator()).url);
  return urls;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: 'conformance' },
      'cap-s': { type: 'string', default: '20' },
      'grace-s': { type: 'string', default: '30' },
      jobs: { type: 'string', default: '2' },
      only: { type: 'string' },
      'update-expect': { type: 'boolean', default: false },
      'set-expect': { type: 'boolean', default: false },
      'fast-s': { type: 'string', default: '5' },
      'keep-tokenizer': { type: 'boolean', default: false },
      from: { type: 'string' },
    },
  });
  const all = loadCommands();
  const rows = all.filter((r) => values.only === undefined || rowName(r).includes(values.only));
  const urls = values.from === undefined ? await startSimulators(Math.max(1, ...rows.map(serverCount))) : [];
  const bounds = { capS: Number(values['cap-s']), graceS: Number(values['grace-s']) };
  try {
    const tokenizer = values['keep-tokenizer'] ? null : OFFLINE_TOKENIZER;
    const results =
      values.from === undefined
        ? await runAll(rows, urls, bounds, Number(values.jobs), tokenizer)
        : readResults(values.from, rows);
    const commit = all[0]?.commit ?? '?';
    const report = markdown(results, commit, tokenizer, bounds);
    console.log(report);
    mkdirSync(values.out, { recursive: true });
    writeFileSync(join(values.out, 'conformance.md'), report);
    const { byClass, withSample, byPage } = totals(results);
    const json = { commit, capS: bounds.capS, byClass, withSample, byPage, results };
    writeFileSync(join(values.out, 'conformance.json'), JSON.stringify(json, null, 2) + '\n');
    if (values.only === undefined) writeReadme(results, commit, tokenizer, bounds);
    if (values['set-expect']) {
      console.error(
        `commands.json: ${setExpect(all, results, Number(values['fast-s']))} rows held by the test`,
      );
    } else if (values['update-expect']) {
      console.error(`commands.json: ${updateExpect(all, results)} expect classes changed`);
    }
  } finally {
    killAll();
  }
}

await main();
