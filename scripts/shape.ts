/**
 * The shape of `src/` in figures, for reviews of the tree (`npm run shape [-- DIR]`): files and lines
 * per folder, the modules with the most import lines, and every function longer than 60 non-blank
 * lines (Biome's `noExcessiveLinesPerFunction` counts a little differently; this is the plain count).
 * DIR (default: this checkout) may be any checkout of the project, e.g. an older commit's worktree.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** Lines a function may have before it is listed. */
const MAX_FUNCTION_LINES = 60;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const lineCount = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** Lines that belong to import statements (`import …` through its closing `from '…';`). */
function importLines(file: ts.SourceFile): number {
  let n = 0;
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement)) continue;
    const start = file.getLineAndCharacterOfPosition(statement.getStart()).line;
    const end = file.getLineAndCharacterOfPosition(statement.getEnd()).line;
    n += end - start + 1;
  }
  return n;
}

interface LongFunction {
  where: string;
  lines: number;
}

function functionName(node: ts.Node): string {
  const named = (node as { name?: ts.Node }).name;
  if (named !== undefined) return named.getText();
  return ts.isVariableDeclaration(node.parent) ? node.parent.name.getText() : '(anonymous)';
}

/** Functions of `file` longer than {@link MAX_FUNCTION_LINES} non-blank lines. */
function longFunctions(file: ts.SourceFile, shown: string): LongFunction[] {
  const text = file.getFullText().split('\n');
  const out: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined) {
      const start = file.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = text.slice(start, end + 1).filter((l) => l.trim() !== '').length;
      if (lines > MAX_FUNCTION_LINES)
        out.push({ where: `${shown}:${start + 1} ${functionName(node)}`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

function main(root: string): void {
  const src = join(root, 'src');
  const perFolder = new Map<string, { files: number; lines: number }>();
  const imports: Array<[string, number]> = [];
  const long: LongFunction[] = [];
  let total = 0;
  for (const path of sourceFiles(src)) {
    const shown = relative(root, path);
    const text = readFileSync(path, 'utf8');
    const folder = relative(src, path).includes('/') ? relative(src, path).split('/')[0] : '(top)';
    const entry = perFolder.get(folder ?? '(top)') ?? { files: 0, lines: 0 };
    entry.files += 1;
    entry.lines += lineCount(text);
    total += lineCount(text);
    perFolder.set(folder ?? '(top)', entry);
    const file = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
    imports.push([shown, importLines(file)]);
    long.push(...longFunctions(file, shown));
  }
  const files = [...perFolder.values()].reduce((n, f) => n + f.files, 0);
  console.log(`src/: ${files} files, ${total} lines`);
  console.log('folder | files | lines | share');
  for (const [folder, f] of [...perFolder].sort((a, b) => b[1].lines - a[1].lines))
    console.log(`${folder} | ${f.files} | ${f.lines} | ${((100 * f.lines) / total).toFixed(1)} %`);
  console.log('\nmost import lines:');
  for (const [file, n] of imports.sort((a, b) => b[1] - a[1]).slice(0, 5)) console.log(`${n} ${file}`);
  console.log(`\nfunctions over ${MAX_FUNCTION_LINES} non-blank lines: ${long.length}`);
  for (const f of long.sort((a, b) => b.lines - a.lines)) console.log(`${f.lines} ${f.where}`);
}

main(process.argv[2] ?? process.cwd());
