/**
 * Runs the `tokenload` CLI from source (for tests that need a real process):
 * `node --import tsx test/helpers/cli-entry.ts profile ...`. Same behaviour as `bin/tokenload.js`.
 */
import { main } from '../../src/cli/main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exitCode = 1;
  },
);
