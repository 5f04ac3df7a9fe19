/**
 * Writes the stored word lists (src/prompt/word-list.ts) of the tokenizers the package ships:
 * `assets/word-lists/<fingerprint>.json`, picked from the vocabulary by the same code a run uses
 * when no stored list matches, and removes any other file of that folder (a list for a tokenizer or
 * rule no longer shipped). Run it after changing a bundled tokenizer, the picking rule or the
 * tokenizer library: `test/unit/word-list-stored.test.ts` fails until then.
 *
 *     npm run word-lists
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILTIN_TOKENIZER, loadTokenizer } from '../src/prompt/tokenizer.js';
import {
  pickWordList,
  storedWordListDir,
  storedWordListOf,
  storedWordListPath,
} from '../src/prompt/word-list.js';

/** The tokenizers whose lists are stored: those the package ships. */
export const STORED_TOKENIZERS = [BUILTIN_TOKENIZER] as const;

/** The stored list files' contents, by path, as this script writes them. */
export function storedWordListFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const spec of STORED_TOKENIZERS) {
    const tokenizer = loadTokenizer(spec);
    const stored = storedWordListOf(tokenizer, pickWordList(tokenizer));
    files.set(storedWordListPath(stored.fingerprint), `${JSON.stringify(stored)}\n`);
  }
  return files;
}

function main(): void {
  const dir = storedWordListDir();
  mkdirSync(dir, { recursive: true });
  const files = storedWordListFiles();
  for (const name of readdirSync(dir)) {
    if (!files.has(join(dir, name))) rmSync(join(dir, name));
  }
  for (const [path, text] of files) {
    writeFileSync(path, text);
    console.log(`wrote ${join('assets', 'word-lists', basename(path))}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
