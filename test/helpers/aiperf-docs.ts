/**
 * AIPerf's documented `aiperf profile` commands (test/fixtures/aiperf-docs/commands.json) made
 * runnable as `tokenload profile` against a local simulator, and the class a run falls in. Shared by
 * `npm run conformance` (scripts/aiperf-conformance.ts) and test/integration/aiperf-conformance.test.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

/** Where the corpus lives. */
export const COMMANDS_FILE = join(import.meta.dirname, '..', 'fixtures', 'aiperf-docs', 'commands.json');

/** The class of one documented command run as `tokenload profile`. */
export type ConformanceClass =
  | 'works'
  | 'wrong-count'
  | 'refused'
  | 'unknown-flag'
  | 'failed'
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
  /** The class the conformance test holds this row to; unset rows are only run by the runner. */
  expect?: { class?: ConformanceClass };
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
  | { kind: 'run'; args: string[]; env: Record<string, string>; notes: string[] }
  | { kind: 'needs-file'; detail: string };

/**
 * The tokenizer the runs use in place of the one a command names or implies (its `--model`): the
 * runs are offline, where a Hugging Face id cannot be fetched and a placeholder model name
 * (`your-model`, `llama`) names none, so without it most commands would stop at the tokenizer.
 */
export const OFFLINE_TOKENIZER = 'builtin:qwen3';

/** Flags whose value is a file the command reads. */
const FILE_FLAGS = new Set(['--input-file']);

/**
 * Turns a documented command into `tokenload profile` arguments run in `dir`: `aiperf profile`
 * becomes `profile`; every `--url`/`-u` value (and `$ENDPOINT_URL`) points at `serverUrl`, keeping
 * the path the doc gives; a command with no `--url` gets one; placeholder words (`...`,
 * `[other options]`) are dropped and noted; the files the page writes are written into `dir`; the
 * tokenizer is `tokenizer` (unless null: then as written). A command that reads a file the page
 * does not write (or a local tokenizer folder) needs that file.
 */
export function prepareCommand(
  row: DocCommand,
  serverUrl: string,
  dir: string,
  tokenizer: string | null = OFFLINE_TOKENIZER,
): PreparedCommand {
  const { env, words } = shellWords(row.command);
  const rest = words.slice(2).filter((w) => !isPlaceholder(w));
  const notes = rest.length < words.length - 2 ? ['fragment'] : [];
  const args: string[] = [];
  let hasUrl = false;
  let hasTokenizer = false;
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] ?? '';
    args.push(w);
    const value = rest[i + 1];
    if ((w === '--url' || w === '-u') && value !== undefined) {
      args.push(pointAt(value, serverUrl));
      hasUrl = true;
      i++;
    } else if (w === '--tokenizer' && value !== undefined && tokenizer !== null) {
      if (/^[./~]/.test(value)) return { kind: 'needs-file', detail: `${value}: a local tokenizer folder` };
      args.push(tokenizer);
      hasTokenizer = true;
      i++;
    } else if (FILE_FLAGS.has(w) && value !== undefined) {
      const missing = writeNamedFile(row, value, dir);
      if (missing !== undefined) return { kind: 'needs-file', detail: missing };
    }
  }
  if (!hasUrl) args.push('--url', serverUrl);
  if (!hasTokenizer && tokenizer !== null) args.push('--tokenizer', tokenizer);
  return { kind: 'run', args: ['profile', ...args], env, notes };
}

/** A word the docs write for "the rest of the command" (`...`, `[other options]`). */
const isPlaceholder = (w: string): boolean => w === '...' || /^\[|\]$/.test(w);

/** The doc's URL with its scheme, host and port replaced by the simulator's. */
function pointAt(url: string, serverUrl: string): string {
  const path = /^(?:https?:\/\/)?[^/]+(\/.*)?$/.exec(url)?.[1] ?? '';
  return serverUrl + path;
}

/** Writes the page's here-document of `name` into `dir`; the reason when the page has none. */
function writeNamedFile(row: DocCommand, name: string, dir: string): string | undefined {
  const content = row.files?.[name] ?? row.files?.[name.replace(/^\.\//, '')];
  if (content === undefined) return `${name}: not written by the page`;
  const path = isAbsolute(name) ? name : join(dir, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return undefined;
}

/** What one run gave. */
export interface RunOutcome {
  code: number | null;
  stderr: string;
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
  /** The summary's request_count.avg, when the run wrote one. */
  requestCount?: number;
}

const REFUSAL = /(\S+) is AIPerf's (?:option|endpoint type); tokenload does not take it[^:]*: (.*)/;

/** Classifies a run of `row` (see docs in scripts/aiperf-conformance.ts for the classes). */
export function classify(row: DocCommand, run: RunOutcome): Classified {
  if (run.timedOut) return { class: 'timeout', detail: 'stopped at the wall timeout' };
  const err = run.stderr;
  if (run.code === 2) {
    const refusal = REFUSAL.exec(err);
    if (refusal !== null) return { class: 'refused', detail: `${refusal[1]}: ${refusal[2]}` };
    const unknown = /unknown option '([^']+)'/.exec(err);
    if (unknown !== null) return { class: 'unknown-flag', detail: unknown[1] ?? '' };
  }
  if (run.code !== 0) return { class: 'failed', detail: `exit ${run.code}: ${firstErrorLine(err)}` };
  const counts = artifactCounts(run.dir);
  const stated = row.stated?.requests;
  const seen = `${counts.records ?? '-'} records, request_count ${counts.requestCount ?? '-'}`;
  if (stated !== undefined && (counts.records !== stated || counts.requestCount !== stated)) {
    return { class: 'wrong-count', detail: `doc states ${stated}; ${seen}`, ...counts };
  }
  return { class: 'works', detail: seen, ...counts };
}

function firstErrorLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim());
  return (lines.find((l) => /error/i.test(l)) ?? lines.find((l) => l !== '') ?? '').slice(0, 200);
}

/** Records in the run's profile_export.jsonl and its summary's request_count, where present. */
export function artifactCounts(dir: string): { records?: number; requestCount?: number } {
  const jsonl = findFile(dir, 'profile_export.jsonl');
  const summary = findFile(dir, 'profile_export_aiperf.json');
  const out: { records?: number; requestCount?: number } = {};
  if (jsonl !== undefined) {
    out.records = readFileSync(jsonl, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '').length;
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
