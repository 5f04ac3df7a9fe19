/**
 * AIPerf's documented `aiperf profile` commands (test/fixtures/aiperf-docs/commands.json) made
 * runnable as `tokenload profile` against a local simulator, and the class a run falls in. Shared by
 * `npm run conformance` (scripts/aiperf-conformance.ts) and test/integration/aiperf-conformance.test.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { PROJECT_ROOT } from './test-cache.js';

/** Where the corpus lives. */
export const COMMANDS_FILE = join(PROJECT_ROOT, 'test', 'fixtures', 'aiperf-docs', 'commands.json');

/** The class of one documented command run as `tokenload profile`. */
export type ConformanceClass =
  | 'works'
  | 'wrong-count'
  | 'refused'
  | 'unknown-flag'
  | 'failed'
  | 'fragment'
  | 'long'
  | 'timeout'
  | 'needs-file';

/** A count the AIPerf page states for its command, with the page's words. */
export interface StatedCount {
  requests: number;
  quote: string;
}

/** One documented command (a row of commands.json). */
export interface DocCommand {
  page: string;
  commit: string;
  /** 1-based: the nth command on the page. */
  index: number;
  /** 1-based line of the command on the page. */
  line: number;
  /** As written: lines joined with newlines, continuations and comments kept. */
  command: string;
  /** Files the page writes with a here-document and the command names: name → content. */
  files?: Record<string, string>;
  stated?: StatedCount;
  /**
   * The project's sample files the runs write in place of files the page names without showing
   * (see {@link SAMPLES}); written by `npm run conformance -- --set-expect`.
   */
  supplied?: string[];
  /**
   * The class the conformance test holds this row to (and, for a fragment, the class of its run
   * completed with `--model`); unset rows are only run by the runner.
   */
  expect?: { class?: ConformanceClass; completed?: ConformanceClass };
}

/** Reads the corpus. */
export function loadCommands(file: string = COMMANDS_FILE): DocCommand[] {
  return JSON.parse(readFileSync(file, 'utf8')) as DocCommand[];
}

/** `page#index`, the name of a row in tables and test names. */
export const rowName = (row: DocCommand): string => `${row.page}#${row.index}`;

/**
 * Values for the shell variables the docs leave to the reader: `$ENDPOINT_URL` is the server
 * (replaced by the simulator's URL like every `--url`), and the loop variables take one value of
 * the loop the page writes (`for c in 1 2 4 8 …`, `for smoothness in 0.5 1.0 …`).
 */
const VARIABLES: Record<string, string> = {
  ENDPOINT_URL: 'http://localhost:8000',
  c: '4',
  smoothness: '0.5',
};

/** A shell word list, and the `VAR=value` environment prefixes before the program name. */
export interface ShellCommand {
  env: Record<string, string>;
  words: string[];
}

/**
 * Splits a documented command as a POSIX shell would for the parts the docs use: backslash
 * continuations, single and double quotes, `$VAR` / `${VAR}` (from {@link VARIABLES}), `#` comments
 * (to the end of their line), and a pipe or `;`/`&&` ending the command.
 */
export function shellWords(command: string): ShellCommand {
  // A continuation with nothing after it (the docs' last line before a closing fence) ends the command.
  return splitEnv(new ShellLexer(command.replace(/\\\n/g, ' ').replace(/\\\s*$/, '')).run());
}

/** The shell word splitter of {@link shellWords}: one character a step. */
class ShellLexer {
  private readonly words: string[] = [];
  private word: string | undefined;
  private quote = '';
  private i = 0;

  constructor(private readonly text: string) {}

  run(): string[] {
    for (; this.i < this.text.length; this.i++) if (!this.step(this.text[this.i] ?? '')) break;
    this.flush();
    return this.words;
  }

  /** Takes one character; false at the end of the command. */
  private step(c: string): boolean {
    if (this.quote === "'") {
      if (c === "'") this.quote = '';
      else this.add(c);
    } else if (c === '$' && /[A-Za-z_{]/.test(this.text[this.i + 1] ?? '')) this.variable();
    else if (this.quote === '"') this.inDouble(c);
    else return this.bare(c);
    return true;
  }

  private variable(): void {
    const m = /^\$(?:\{(\w+)\}|(\w+))/.exec(this.text.slice(this.i));
    this.add(VARIABLES[m?.[1] ?? m?.[2] ?? ''] ?? '');
    this.i += (m?.[0].length ?? 1) - 1;
  }

  private inDouble(c: string): void {
    if (c === '"') this.quote = '';
    else if (c === '\\' && /["\\$`]/.test(this.text[this.i + 1] ?? '')) this.add(this.text[++this.i] ?? '');
    else this.add(c);
  }

  private bare(c: string): boolean {
    if (c === "'" || c === '"') {
      this.quote = c;
      this.add('');
    } else if (c === '\\') this.add(this.text[++this.i] ?? '');
    else if (/\s/.test(c)) this.flush();
    else if (c === '#' && this.word === undefined) this.i = skipToLineEnd(this.text, this.i);
    else if (c === '|' || c === ';' || (c === '&' && this.text[this.i + 1] === '&')) return false;
    else this.add(c);
    return true;
  }

  private add(s: string): void {
    this.word = (this.word ?? '') + s;
  }

  private flush(): void {
    if (this.word !== undefined) this.words.push(this.word);
    this.word = undefined;
  }
}

function skipToLineEnd(text: string, i: number): number {
  const end = text.indexOf('\n', i);
  return end < 0 ? text.length : end;
}

function splitEnv(words: string[]): ShellCommand {
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
    const [name, ...value] = (words.shift() ?? '').split('=');
    env[name ?? ''] = value.join('=');
  }
  return { env, words };
}

/** A documented command ready to run, or the reason it cannot be. */
export type PreparedCommand =
  | {
      kind: 'run';
      args: string[];
      env: Record<string, string>;
      notes: string[];
      /** It has placeholder words (`...`, `[other options]`) or no `--model`: not a whole command. */
      fragment: boolean;
      /** The project's sample files written in place of files the page names without showing. */
      supplied: string[];
      /** How long the command itself says it runs (`60 s (--benchmark-duration)`), when it says. */
      expected?: string;
    }
  | { kind: 'needs-file'; detail: string };

/**
 * The tokenizer the runs use in place of the one a command names or implies (its `--model`): the
 * runs are offline, where a Hugging Face id cannot be fetched and a placeholder model name
 * (`your-model`, `llama`) names none, so without it most commands would stop at the tokenizer.
 */
export const OFFLINE_TOKENIZER = 'builtin:qwen3';

/** The model name a fragment without `--model` is completed with, so its shown options are tried. */
export const FRAGMENT_MODEL = 'fragment-model';

/** Flags whose value is a file the command reads. */
const FILE_FLAGS = new Set(['--input-file']);

/** The project's root folder (sample paths are relative to it). */
const ROOT = PROJECT_ROOT;

/**
 * A sample of one trace format from the project, supplied for a file a page names (and whose
 * format its `--custom-dataset-type` tells) but does not show: the first `lines` lines of a real
 * public trace in examples/traces/ (SOURCES.md says where each comes from). Ten lines, as the
 * Mooncake page's own quick subset (`head -n 10 mooncake_trace.jsonl`).
 */
export const SAMPLES: Readonly<Record<string, { path: string; lines: number }>> = {
  mooncake_trace: { path: 'examples/traces/mooncake_conversation_trace.jsonl', lines: 10 },
  bailian_trace: { path: 'examples/traces/bailian_traceA_stratified_head24.jsonl', lines: 10 },
};

/** How a row's `supplied` names a sample: its path and the lines taken. */
export const sampleName = (sample: { path: string; lines: number }): string =>
  `${sample.path} (first ${sample.lines} lines)`;

/** The state of one {@link prepareCommand}: the arguments so far and what was found on the way. */
interface Preparing {
  row: DocCommand;
  dir: string;
  tokenizer: string | null;
  servers: readonly string[];
  /** Each distinct server a doc URL names (scheme, host and port) → the index of its simulator. */
  hosts: Map<string, number>;
  args: string[];
  supplied: string[];
  hasUrl: boolean;
  hasTokenizer: boolean;
  hasModel: boolean;
}

/**
 * Turns a documented command into `tokenload profile` arguments run in `dir`: `aiperf profile`
 * becomes `profile`; each distinct server the command's `--url`/`-u` values (and `$ENDPOINT_URL`)
 * name points at a simulator of its own from `serverUrls` (in order of first mention), keeping the
 * path the doc gives; a command with no `--url` gets the first; placeholder words (`...`,
 * `[other options]`) are dropped and the command is marked a fragment, as is one without `--model`
 * (completed with `--model` {@link FRAGMENT_MODEL}); the files the page writes are written into
 * `dir`; a file the page names without showing is written from {@link SAMPLES} when the command's
 * `--custom-dataset-type` tells its format; the tokenizer is `tokenizer` (unless null: then as
 * written). A command that reads a file the page does not write and whose format nothing tells
 * (or a local tokenizer folder) needs that file.
 * @throws Error when the command names more distinct servers than `serverUrls` holds.
 */
export function prepareCommand(
  row: DocCommand,
  serverUrls: readonly string[],
  dir: string,
  tokenizer: string | null = OFFLINE_TOKENIZER,
): PreparedCommand {
  const { env, words } = shellWords(row.command);
  const rest = words.slice(2).filter((w) => !isPlaceholder(w));
  const placeholders = rest.length < words.length - 2;
  const state: Preparing = {
    row,
    dir,
    tokenizer,
    servers: serverUrls,
    hosts: new Map(),
    args: [],
    supplied: [],
    hasUrl: false,
    hasTokenizer: false,
    hasModel: false,
  };
  for (let i = 0; i < rest.length; i++) {
    const step = takeWord(state, rest, i);
    if (typeof step === 'string') return { kind: 'needs-file', detail: step };
    i = step;
  }
  const notes = placeholders ? ['fragment'] : [];
  if (!state.hasUrl) state.args.push('--url', serverUrls[0] ?? '');
  if (!state.hasTokenizer && tokenizer !== null) state.args.push('--tokenizer', tokenizer);
  if (!state.hasModel) {
    state.args.push('--model', FRAGMENT_MODEL);
    notes.push(`completed with --model ${FRAGMENT_MODEL}`);
  }
  for (const s of state.supplied) notes.push(`sample ${s}`);
  const expected = expectedDuration(state.args);
  return {
    kind: 'run',
    args: ['profile', ...state.args],
    env,
    notes,
    fragment: placeholders || !state.hasModel,
    supplied: state.supplied,
    ...(expected !== undefined ? { expected } : {}),
  };
}

/** Takes the word at `i` (and its values) into `state`; the last index taken, or why a file is missing. */
function takeWord(state: Preparing, rest: readonly string[], i: number): number | string {
  const w = rest[i] ?? '';
  const value = rest[i + 1];
  state.args.push(w);
  if (w === '--model' || w === '-m') state.hasModel = true;
  if ((w === '--url' || w === '-u') && value !== undefined) {
    // AIPerf takes several values after one --url (`--url A B`).
    let j = i + 1;
    for (; j < rest.length && !(rest[j] ?? '-').startsWith('-'); j++)
      state.args.push(pointAt(state, rest[j] ?? ''));
    state.hasUrl = true;
    return j - 1;
  }
  if (w === '--tokenizer' && value !== undefined && state.tokenizer !== null) {
    if (/^[./~]/.test(value)) return `${value}: a local tokenizer folder`;
    state.args.push(state.tokenizer);
    state.hasTokenizer = true;
    return i + 1;
  }
  if (FILE_FLAGS.has(w) && value !== undefined) {
    state.args.push(value);
    const missing = writeNamedFile(state, value, datasetType(rest));
    return missing ?? i + 1;
  }
  return i;
}

/** The value of `--custom-dataset-type` in `words`, if given. */
function datasetType(words: readonly string[]): string | undefined {
  const i = words.indexOf('--custom-dataset-type');
  return i < 0 ? undefined : words[i + 1];
}

/** A word the docs write for "the rest of the command" (`...`, `[other options]`). */
const isPlaceholder = (w: string): boolean => w === '...' || /^\[|\]$/.test(w);

/** The doc's URL with its scheme, host and port replaced by the simulator of that server. */
function pointAt(state: Preparing, url: string): string {
  const m = /^((?:https?:\/\/)?[^/]+)(\/.*)?$/.exec(url);
  const host = (m?.[1] ?? url).replace(/^https?:\/\//, '');
  let index = state.hosts.get(host);
  if (index === undefined) {
    index = state.hosts.size;
    state.hosts.set(host, index);
  }
  const server = state.servers[index];
  if (server === undefined) {
    throw new Error(`${rowName(state.row)} names ${index + 1} servers; only ${state.servers.length} given`);
  }
  return server + (m?.[2] ?? '');
}

/** How many distinct servers a row's `--url` values name (the simulators it needs; at least 1). */
export function serverCount(row: DocCommand): number {
  const { words } = shellWords(row.command);
  const hosts = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    if (words[i] !== '--url' && words[i] !== '-u') continue;
    for (let j = i + 1; j < words.length && !(words[j] ?? '-').startsWith('-'); j++) {
      hosts.add((words[j] ?? '').replace(/^https?:\/\//, '').replace(/\/.*$/, ''));
    }
  }
  return Math.max(1, hosts.size);
}

/**
 * Writes the file `name` into the run's folder: the page's here-document of it, else the sample of
 * the format `type` names ({@link SAMPLES}); the reason when there is neither.
 */
function writeNamedFile(state: Preparing, name: string, type: string | undefined): string | undefined {
  const { row, dir } = state;
  let content = row.files?.[name] ?? row.files?.[name.replace(/^\.\//, '')];
  const sample = type === undefined ? undefined : SAMPLES[type];
  if (content === undefined && sample !== undefined) {
    const lines = readFileSync(join(ROOT, sample.path), 'utf8').split('\n').slice(0, sample.lines);
    content = lines.join('\n') + '\n';
    state.supplied.push(sampleName(sample));
  }
  if (content === undefined) {
    return `${name}: not written by the page${type === undefined ? '' : ` (no sample of ${type})`}`;
  }
  // An absolute path of the doc is written under the run's folder too, and read from there.
  const path = join(dir, isAbsolute(name) ? name.slice(1) : name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  if (isAbsolute(name)) state.args[state.args.length - 1] = path;
  return undefined;
}

/** The value after `flag` in `args` as a number, if given. */
function numberAfter(args: readonly string[], flag: string): number | undefined {
  const i = args.indexOf(flag);
  const v = i < 0 ? undefined : Number(args[i + 1]);
  return v === undefined || Number.isNaN(v) ? undefined : v;
}

/**
 * How long a command says it runs, from its own options: `--benchmark-duration` (plus
 * `--warmup-duration`), else `--request-count` over `--request-rate`, else the longest ramp (a lower
 * bound); undefined when it says nothing (its length is then the server's speed).
 */
export function expectedDuration(args: readonly string[]): string | undefined {
  const duration = numberAfter(args, '--benchmark-duration');
  const warmup = numberAfter(args, '--warmup-duration') ?? 0;
  if (duration !== undefined) {
    return `${duration + warmup} s (--benchmark-duration${warmup > 0 ? ' + --warmup-duration' : ''})`;
  }
  const count = numberAfter(args, '--request-count');
  const rate = numberAfter(args, '--request-rate');
  if (count !== undefined && rate !== undefined && rate > 0) {
    return `${count / rate} s (${count} requests at ${rate}/s)`;
  }
  const ramps = ['--concurrency-ramp-duration', '--request-rate-ramp-duration']
    .map((f) => numberAfter(args, f))
    .filter((v): v is number => v !== undefined);
  if (ramps.length > 0) return `at least ${Math.max(...ramps)} s (the ramp)`;
  return undefined;
}

/** What one run gave. */
export interface RunOutcome {
  code: number | null;
  stderr: string;
  /** It was still running at the cap and was sent SIGINT, as a user's Ctrl-C. */
  interrupted?: boolean;
  /** It did not end (after the cap's SIGINT, or at a wall timeout) and was killed. */
  timedOut: boolean;
  /** The folder the run wrote in (its artifacts are found under it). */
  dir: string;
}

/** A row's class and the detail a table shows for it. */
export interface Classified {
  class: ConformanceClass;
  detail: string;
  /** Records in profile_export.jsonl, when the run wrote one. */
  records?: number;
  /** Records of it with an error. */
  errors?: number;
  /** The summary's request_count.avg, when the run wrote one. */
  requestCount?: number;
  /** For a fragment: the class the command completed with `--model` got. */
  completed?: ConformanceClass;
}

const REFUSAL = /(\S+) is AIPerf's (?:option|endpoint type); tokenload does not take it[^:]*: (.*)/;

/** Exit code of a run stopped by Ctrl-C (tokenload's EXIT_INTERRUPTED). */
const EXIT_INTERRUPTED = 130;

/**
 * Classifies a run of `row` (see scripts/aiperf-conformance.ts for the classes). `fragment` says the
 * command is not whole (see {@link prepareCommand}): it is classed `fragment` unless it stops at an
 * option tokenload refuses or does not know, with what its completed run gave in `completed`.
 */
export function classify(row: DocCommand, run: RunOutcome, fragment = false): Classified {
  const got = classifyRun(row, run);
  if (!fragment || got.class === 'refused' || got.class === 'unknown-flag') return got;
  return {
    ...got,
    class: 'fragment',
    completed: got.class,
    detail: `completed: ${got.class}: ${got.detail}`,
  };
}

function classifyRun(row: DocCommand, run: RunOutcome): Classified {
  if (run.timedOut) return { class: 'timeout', detail: 'did not end, killed' };
  const err = run.stderr;
  if (run.code === 2) {
    const refusal = REFUSAL.exec(err);
    if (refusal !== null) return { class: 'refused', detail: `${refusal[1]}: ${refusal[2]}` };
    const unknown = /unknown option '([^']+)'/.exec(err);
    if (unknown !== null) return { class: 'unknown-flag', detail: unknown[1] ?? '' };
  }
  const counts = artifactCounts(run.dir);
  const seen = `${counts.records ?? '-'} records (${counts.errors ?? '-'} errors), request_count ${counts.requestCount ?? '-'}`;
  if (run.interrupted === true) {
    const warmupS = numberAfter(shellWords(row.command).words, '--warmup-duration');
    return classifyInterrupted(run, counts, seen, warmupS);
  }
  if (run.code !== 0) return { class: 'failed', detail: `exit ${run.code}: ${firstErrorLine(err)}` };
  const stated = row.stated?.requests;
  if (stated !== undefined && (counts.records !== stated || counts.requestCount !== stated)) {
    return { class: 'wrong-count', detail: `doc states ${stated}; ${seen}`, ...counts };
  }
  return { class: 'works', detail: seen, ...counts };
}

/**
 * `long` when a run stopped by SIGINT at the cap exited 130 with requests, no errors and a summary;
 * a command with a `--warmup-duration` (`warmupS`) may have measured nothing yet, still warming up.
 */
function classifyInterrupted(
  run: RunOutcome,
  counts: ReturnType<typeof artifactCounts>,
  seen: string,
  warmupS: number | undefined,
): Classified {
  const inWarmup = warmupS !== undefined && counts.records === 0;
  const ok =
    run.code === EXIT_INTERRUPTED &&
    ((counts.records ?? 0) > 0 || inWarmup) &&
    counts.errors === 0 &&
    counts.requestCount !== undefined;
  if (ok) {
    const when = inWarmup ? `in its ${warmupS} s warm-up` : 'at the cap';
    return { class: 'long', detail: `stopped by SIGINT ${when}: ${seen}`, ...counts };
  }
  const why = run.code === EXIT_INTERRUPTED ? seen : `exit ${run.code}: ${firstErrorLine(run.stderr)}`;
  return { class: 'failed', detail: `stopped by SIGINT at the cap; ${why}`, ...counts };
}

function firstErrorLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim());
  return (lines.find((l) => /error/i.test(l)) ?? lines.find((l) => l !== '') ?? '').slice(0, 200);
}

/**
 * Records in the run's profile_export.jsonl (and how many carry an error) and its summary's
 * request_count, where present.
 */
export function artifactCounts(dir: string): { records?: number; errors?: number; requestCount?: number } {
  const jsonl = findFile(dir, 'profile_export.jsonl');
  const summary = findFile(dir, 'profile_export_aiperf.json');
  const out: { records?: number; errors?: number; requestCount?: number } = {};
  if (jsonl !== undefined) {
    const lines = readFileSync(jsonl, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    out.records = lines.length;
    out.errors = lines.filter((l) => (JSON.parse(l) as { error?: unknown }).error != null).length;
  }
  if (summary !== undefined) {
    const s = JSON.parse(readFileSync(summary, 'utf8')) as { request_count?: { avg?: number } };
    if (typeof s.request_count?.avg === 'number') out.requestCount = s.request_count.avg;
  }
  return out;
}

/** The first file of that name under `dir`, breadth first. */
function findFile(dir: string, name: string): string | undefined {
  const queue = [dir];
  while (queue.length > 0) {
    const d = queue.shift() ?? '';
    if (!existsSync(d)) continue;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isFile() && e.name === name) return join(d, e.name);
      if (e.isDirectory()) queue.push(join(d, e.name));
    }
  }
  return undefined;
}

/**
 * `tokenload simulate` options of the conformance runs: fixed timing, 5 ms to the first token and
 * 0.5 ms per further token, sent 10 tokens a chunk (the runs check counts, not token timing, and a
 * chunk a token would spend the shared CPU on framing), so a documented 1000-request run of
 * 500-token answers at concurrency 100 ends in seconds; no warm-up before listening.
 */
export const SIMULATOR_ARGS: readonly string[] = [
  '--mode',
  'fixed',
  '--ttft-ms',
  '5',
  '--itl-ms',
  '0.5',
  '--tokens-per-chunk',
  '10',
  '--warmup-ms',
  '0',
];
