#!/usr/bin/env node
import { main } from '../dist/src/cli/main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    // System errors (a busy port, an artifact folder under a file, a full disk) are the user's
    // environment, not our bug: one line, no stack. Anything else is a bug: full stack.
    const systemError = err instanceof Error && typeof err.code === 'string' && 'syscall' in err;
    console.error(
      systemError ? `error: ${err.message}` : err instanceof Error ? (err.stack ?? err.message) : String(err),
    );
    process.exitCode = 1;
  },
);
