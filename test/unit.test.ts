/**
 * Every file of test/unit in this one process, in name order (`npm run test:parallel` runs this file
 * instead of one process per unit file). Unit tests drive the product's exported functions in the
 * test's own process and need nothing of their own from it, and starting a process (Node, then the
 * modules a file imports) cost more CPU than most unit files' tests: 75 files took 38 s of CPU one
 * process each, about 12 s of it their tests. A unit file still runs alone as before (test/README.md).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = join(import.meta.dirname, 'unit');
const ext = import.meta.url.endsWith('.ts') ? '.test.ts' : '.test.js';
for (const name of readdirSync(dir)
  .filter((n) => n.endsWith(ext))
  .sort()) {
  await import(pathToFileURL(join(dir, name)).href);
}
