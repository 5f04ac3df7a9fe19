/**
 * How a test starts a module of this repository (a test helper, a source entry) in a child process,
 * in the form the test itself runs in: compiled, as `npm test` runs every test file from
 * `test-build/` (`npm run test:build`), or from the sources through tsx, as a developer runs one file
 * (`node --import tsx --test test/unit/FILE.test.ts`).
 */
import { fileURLToPath } from 'node:url';

/** What to give `fork(path, args, { execArgv })`, or `spawn(node, [...execArgv, path, ...args])`. */
export interface ChildModule {
  /** Absolute path of the module's file: `.ts` from the sources, `.js` in the compiled tree. */
  path: string;
  /**
   * Node's options for the child: tsx by its absolute path from the sources (a child whose working
   * folder is elsewhere still finds it), source maps in the compiled tree (stack traces name the
   * `.ts` lines).
   */
  execArgv: string[];
}

/**
 * The module `relativePath` (from the caller's folder, without extension, e.g.
 * `'../helpers/cli-entry'`) of the tree the caller (`import.meta.url`) runs from.
 */
export function childModule(callerUrl: string, relativePath: string): ChildModule {
  if (callerUrl.endsWith('.ts')) {
    return {
      path: fileURLToPath(new URL(`${relativePath}.ts`, callerUrl)),
      execArgv: ['--import', import.meta.resolve('tsx')],
    };
  }
  return {
    path: fileURLToPath(new URL(`${relativePath}.js`, callerUrl)),
    execArgv: ['--enable-source-maps'],
  };
}
