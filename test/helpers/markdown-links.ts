/**
 * Relative links of Markdown files, checked the way a reader on GitHub follows them: the file (or
 * folder) a link names must exist, and an anchor (`#…`) into a Markdown file must be the slug of one
 * of its headings, by GitHub's rule (lower case; every character dropped but letters, digits, marks,
 * `_`, `-` and spaces; spaces become `-`; a repeated slug gets `-1`, `-2`, …).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** GitHub's anchor of a heading whose rendered text is `text`. */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** A heading's text as GitHub renders it: link text kept, code-span backticks and HTML tags dropped. */
function renderedText(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '');
}

/** The lines of `text` outside fenced code blocks, each with its 1-based line number. */
function proseLines(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      return;
    }
    if (opener !== undefined) {
      fence = opener;
      return;
    }
    out.push({ line: i + 1, text: line });
  });
  return out;
}

/** Every anchor a Markdown document has: its headings' slugs (repeats numbered) and `<a id|name>`. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1] as string);
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(renderedText(heading));
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** One link of a Markdown file. */
export interface MarkdownLink {
  /** 1-based line of the link. */
  line: number;
  /** The link as written: `[text](target)`. */
  written: string;
  /** The target, without a title: `docs/flags.md#tokenload-profile`. */
  target: string;
}

/** A code span's text blanked out, so a link written inside one is not taken for a link. */
const withoutCodeSpans = (line: string): string =>
  line.replace(/(`+)(.+?)\1/g, (span) => ' '.repeat(span.length));

/** Every inline link and image of `markdown` outside code (fenced blocks and code spans), in order. */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const prose = withoutCodeSpans(text);
    for (const m of prose.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^\s)]*)(?:\s+"[^"]*")?\s*\)/g)) {
      const target = (m[1] as string).replace(/^<(.*)>$/, '$1');
      links.push({ line, written: text.slice(m.index, m.index + m[0].length), target });
    }
    for (const m of prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*(\S+)/g))
      links.push({ line, written: m[0], target: m[1] as string });
  }
  return links;
}

/** A link to another site or scheme (`https:`, `mailto:`, `//host`), which is not checked here. */
const isExternal = (target: string): boolean =>
  /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** `path` from `root`, `/`-separated. */
const fromRoot = (root: string, path: string): string => relative(root, path).split(sep).join('/');

/**
 * What is wrong with the relative link `target` of the file `from` (a path inside `root`), or
 * undefined when it leads to a file or folder that exists and, for an anchor into a Markdown file,
 * to one of its headings.
 */
function linkProblem(
  root: string,
  from: string,
  target: string,
  anchorsIn: (path: string) => Set<string>,
): string | undefined {
  const hash = target.indexOf('#');
  const pathPart = decodeURI(hash < 0 ? target : target.slice(0, hash));
  const to = pathPart === '' ? from : resolve(dirname(from), pathPart);
  const inside = fromRoot(root, to);
  if (inside === '..' || inside.startsWith('../')) return 'leads out of the repository';
  if (!existsSync(to)) return `no such file or folder ${inside}`;
  if (hash < 0 || !to.endsWith('.md') || !statSync(to).isFile()) return undefined;
  const anchor = decodeURIComponent(target.slice(hash + 1));
  return anchorsIn(to).has(anchor) ? undefined : `no heading with the anchor #${anchor} in ${inside}`;
}

/**
 * The broken relative links of the Markdown files `files` (paths from `root`), each as
 * `file:line: [text](target): why`.
 */
export function brokenLinks(root: string, files: readonly string[]): string[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (path: string): Set<string> => {
    let anchors = anchorCache.get(path);
    if (anchors === undefined) {
      anchors = anchorsOf(readFileSync(path, 'utf8'));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  const broken: string[] = [];
  for (const file of files) {
    const from = join(root, file);
    for (const link of linksOf(readFileSync(from, 'utf8'))) {
      if (isExternal(link.target)) continue;
      const problem = linkProblem(root, from, link.target, anchorsIn);
      if (problem !== undefined) broken.push(`${file}:${link.line}: ${link.written}: ${problem}`);
    }
  }
  return broken;
}

/** Folders never searched for Markdown files: dependencies, build output, version control. */
const SKIPPED = new Set(['node_modules', 'dist', 'artifacts']);

/** Every `.md` file under `root` (paths from `root`, `/`-separated, sorted), outside skipped and hidden folders. */
export function markdownFiles(root: string, under = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, under), { withFileTypes: true })) {
    const path = under === '' ? entry.name : `${under}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.') && !SKIPPED.has(entry.name)) out.push(...markdownFiles(root, path));
    } else if (entry.name.endsWith('.md')) {
      out.push(path);
    }
  }
  return out.sort();
}

/** The cells of a table row: split on `|` not escaped by a backslash, outer pipes dropped. */
function cellsOf(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '')
    .split(/(?<!\\)\|/);
}

/**
 * The rows of `markdown`'s tables whose number of cells differs from their header's (an unescaped
 * `|` in a cell, or a cell lost), each as `line N: M cells, the header has K`.
 */
export function raggedTableRows(markdown: string): string[] {
  const out: string[] = [];
  let header: number | undefined;
  for (const { line, text } of proseLines(markdown)) {
    if (!/^\s*\|/.test(text)) {
      header = undefined;
      continue;
    }
    const cells = cellsOf(text).length;
    if (header === undefined) header = cells;
    else if (cells !== header) out.push(`line ${line}: ${cells} cells, the header has ${header}`);
  }
  return out;
}
