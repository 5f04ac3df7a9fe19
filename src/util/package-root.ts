import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * Absolute path of the tokenload package root (the folder holding its package.json), found by
 * walking up from this module. Works from `src/` under tsx and from `dist/src/` after the build.
 * @throws {Error} if no tokenload package.json is found above this file.
 */
export function packageRoot(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'tokenload') {
        cached = dir;
        return dir;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('tokenload package root not found');
    dir = parent;
  }
}

/** Version string from package.json. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}
