/**
 * How to start a `worker_threads` entry module in both builds: the compiled `.js` file next to the
 * caller in `dist/`, or, when running from source under tsx (tests, `node --import tsx`), an eval
 * stub that registers tsx inside the worker and imports the `.ts` file.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The `Worker` constructor's first argument and its `eval` option. */
export interface WorkerSource {
  source: string;
  eval: boolean;
}

/**
 * The entry `name` (without extension) in the folder of `callerUrl` (`import.meta.url`).
 * @example new Worker(s.source, { eval: s.eval }) with s = workerSource(import.meta.url, 'worker-entry')
 */
export function workerSource(callerUrl: string, name: string): WorkerSource {
  const ts = new URL(`./${name}.ts`, callerUrl);
  if (callerUrl.endsWith('.ts') && existsSync(fileURLToPath(ts))) {
    const tsx = import.meta.resolve('tsx/esm/api');
    const source = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(ts.href)}); });`;
    return { source, eval: true };
  }
  return { source: fileURLToPath(new URL(`./${name}.js`, callerUrl)), eval: false };
}
