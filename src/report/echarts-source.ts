/**
 * The browser build of echarts (`echarts/dist/echarts.min.js`, the full bundle), read from the
 * installed package at runtime so reports inline exactly the version tokenload renders with.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/** Absolute path of `echarts.min.js` in the installed echarts package. */
export function echartsBrowserPath(): string {
  // The package's "require" entry is dist/echarts.js; the minified bundle sits next to it
  // (dist/ itself is not in the package's "exports", so it cannot be resolved directly).
  const entry = createRequire(import.meta.url).resolve('echarts');
  return join(dirname(entry), 'echarts.min.js');
}

/**
 * The source text of `echarts.min.js` (≈1.1 MB), read once and cached.
 * @throws {Error} when the echarts package is not installed.
 */
export function echartsBrowserSource(): string {
  cached ??= readFileSync(echartsBrowserPath(), 'utf8');
  return cached;
}
