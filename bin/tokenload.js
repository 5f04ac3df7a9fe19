#!/usr/bin/env node
import { main } from '../dist/src/cli/main.js';

// main() maps every error to its exit code itself; this handler only catches a failure of that mapping.
main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    console.error('tokenload: internal error. This is a bug: please report it with the output above.');
    process.exitCode = 70;
  },
);
