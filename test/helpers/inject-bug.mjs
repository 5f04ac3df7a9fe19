// Preloaded with `node --import` to plant an internal bug in the real binary: creating a folder whose
// path contains "inject-bug-here" throws a TypeError (no errno code), as a programming error would.
import fs from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';

const mkdir = fs.mkdir;
fs.mkdir = (path, ...rest) => {
  if (String(path).includes('inject-bug-here'))
    throw new TypeError('injected: cannot read properties of undefined');
  return mkdir(path, ...rest);
};
syncBuiltinESMExports();
