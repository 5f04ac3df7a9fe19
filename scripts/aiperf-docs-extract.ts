/**
 * Collects every `aiperf profile` command shown in AIPerf's README.md and docs/ pages into
 * test/fixtures/aiperf-docs/commands.json, the corpus `npm run conformance` runs.
 *
 *     node --import tsx scripts/aiperf-docs-extract.ts <aiperf git dir> [commit]
 *
 * Reads the pages with `git show` at the commit (default HEAD). A command is a line in a fenced code
 * block that starts with `aiperf profile` (after an optional `$ ` prompt and `VAR=value` prefixes),
 * joined over its backslash continuations; commands in prose, tables and program output
 * (`CLI Command: …`) are not commands a user types and are skipped. Files a page writes with a
 * here-document (`cat > NAME << 'EOF'` … `EOF`) are kept with the rows whose command names them.
 * Rows already in the output keep their `stated`, `supplied` and `expect` (matched by page and
 * command text), so annotations survive a refresh.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One documented command, as stored in commands.json. */
interface CommandRow {
  page: string;
  commit: string;
  /** 1-based: the nth command on the page. */
  index: number;
  /** 1-based line of the command's first line on the page. */
  line: number;
  command: string;
  /** Files the page writes (here-documents) that the command names: file name → content. */
  files?: Record<string, string>;
  stated?: unknown;
  supplied?: unknown;
  expect?: unknown;
}

const OUT = join(import.meta.dirname, '..', 'test', 'fixtures', 'aiperf-docs', 'commands.json');
const COMMAND_START = /^\s*(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S+\s+)*aiperf\s+profile\b/;
const FENCE = /^\s*(```|~~~)/;
const HEREDOC = /^\s*cat\s+(?:>\s*(\S+)\s+<<-?\s*['"]?(\w+)['"]?|<<-?\s*['"]?(\w+)['"]?\s*>\s*(\S+))\s*$/;

function git(dir: string, args: string[]): string {
  return execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** A file a page writes with a here-document, and the line it starts on. */
interface Heredoc {
  name: string;
  line: number;
  content: string;
}

/** The here-documents of a page, in page order. */
function heredocs(lines: readonly string[]): Heredoc[] {
  const files: Heredoc[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = HEREDOC.exec(lines[i] ?? '');
    if (m === null) continue;
    const name = m[1] ?? m[4] ?? '';
    const marker = m[2] ?? m[3] ?? 'EOF';
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && (lines[j] ?? '').trim() !== marker) body.push(lines[j++] ?? '');
    files.push({ name, line: i, content: body.join('\n') + '\n' });
    i = j;
  }
  return files;
}

/** The commands of one page, in page order. */
function pageCommands(page: string, commit: string, text: string): CommandRow[] {
  const lines = text.split('\n');
  const files = heredocs(lines);
  const rows: CommandRow[] = [];
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (FENCE.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (!inFence || !COMMAND_START.test(line)) continue;
    const start = i;
    const parts = [line.trim()];
    // A comment line between continued lines is read as an annotation (the docs mean it so, though a
    // shell would end the command there); a trailing backslash before the closing fence is dropped.
    let last = line;
    while ((continues(last) || openQuote(parts.join('\n'))) && i + 1 < lines.length) {
      const next = lines[i + 1] ?? '';
      if (FENCE.test(next)) break;
      i++;
      parts.push(next.trim());
      if (!/^\s*#/.test(next)) last = next;
    }
    const command = parts.join('\n');
    const named = namedFiles(files, start, command);
    rows.push({
      page,
      commit,
      index: rows.length + 1,
      line: start + 1,
      command,
      ...(named.length > 0 ? { files: Object.fromEntries(named) } : {}),
    });
  }
  return rows;
}

/** The files a command names: for each name, the page's last here-document of it before the command. */
function namedFiles(files: readonly Heredoc[], line: number, command: string): [string, string][] {
  const chosen = new Map<string, string>();
  for (const f of files) {
    if (!new RegExp(`(^|[\\s/'"=])${escapeRegExp(f.name)}\\b`).test(command)) continue;
    if (f.line < line || !chosen.has(f.name)) chosen.set(f.name, f.content);
  }
  return [...chosen.entries()];
}

const continues = (line: string): boolean => line.trimEnd().endsWith('\\');

/** Whether a shell text ends inside a single- or double-quoted string (a value that spans lines). */
function openQuote(text: string): boolean {
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === '' && c === '\\') i++;
    else if (quote === '' && (c === "'" || c === '"')) quote = c;
    else if (c === quote) quote = '';
  }
  return quote !== '';
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function main(): void {
  const [dir, commitArg] = process.argv.slice(2);
  if (dir === undefined) throw new Error('usage: aiperf-docs-extract.ts <aiperf git dir> [commit]');
  const commit = git(dir, ['rev-parse', commitArg ?? 'HEAD']).trim();
  const pages = git(dir, ['ls-tree', '-r', '--name-only', commit])
    .split('\n')
    .filter((p) => p === 'README.md' || (/^docs\/.*\.md$/.test(p) && !/^docs\/(dev|kubernetes)\//.test(p)))
    .sort();
  const previous = new Map<string, CommandRow>();
  if (existsSync(OUT)) {
    for (const row of JSON.parse(readFileSync(OUT, 'utf8')) as CommandRow[])
      previous.set(`${row.page}\n${row.command}`, row);
  }
  const rows = pages.flatMap((page) => pageCommands(page, commit, git(dir, ['show', `${commit}:${page}`])));
  for (const row of rows) {
    const old = previous.get(`${row.page}\n${row.command}`);
    if (old?.stated !== undefined) row.stated = old.stated;
    if (old?.supplied !== undefined) row.supplied = old.supplied;
    if (old?.expect !== undefined) row.expect = old.expect;
  }
  writeFileSync(OUT, JSON.stringify(rows, null, 2) + '\n');
  const pageCount = new Set(rows.map((r) => r.page)).size;
  console.log(`${rows.length} commands from ${pageCount} pages at ${commit} → ${OUT}`);
}

main();
