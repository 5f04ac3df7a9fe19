/**
 * Long fuzz run: the properties of the bounded fuzz tests (`test/unit/fuzz-*.test.ts`), each for a
 * share of `--seconds` (default 300), with a fresh random seed. Prints runs, failures (with the
 * seed and counterexample to replay) and outcome tallies as JSON.
 *
 *   npm run fuzz -- --seconds 300
 */
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import {
  fuzzTempDir,
  loaderProperty,
  type NamedProperty,
  recordBuilderProperty,
  sseRandomBytesProperty,
  sseTruncatedFixtureProperty,
} from '../test/helpers/fuzz-properties.js';
import { arg, machine, r3 } from './common.js';

const totalSeconds = Number(arg('seconds', '300'));
const dir = fuzzTempDir();
const properties: NamedProperty[] = [
  sseRandomBytesProperty(),
  sseTruncatedFixtureProperty(),
  recordBuilderProperty(),
  loaderProperty('bailian', dir),
  loaderProperty('mooncake', dir),
];
const perPropertyMs = (totalSeconds * 1000) / properties.length;
const results: Record<string, unknown>[] = [];
let failed = 0;
try {
  for (const p of properties) {
    const seed = Date.now() | 0;
    const t0 = performance.now();
    const details = await fc.check(p.property, {
      seed,
      numRuns: Number.MAX_SAFE_INTEGER,
      interruptAfterTimeLimit: perPropertyMs,
      markInterruptAsFailure: false,
    });
    if (details.failed) failed++;
    results.push({
      property: p.name,
      seed,
      runs: details.numRuns,
      seconds: r3((performance.now() - t0) / 1000),
      failed: details.failed,
      ...(details.failed
        ? {
            counterexample: fc.stringify(details.counterexample),
            path: details.counterexamplePath,
            error: String(details.errorInstance),
          }
        : {}),
      outcomes: p.counts,
    });
    process.stderr.write(`[fuzz] ${p.name}: ${details.numRuns} runs, failed=${details.failed}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  JSON.stringify(
    {
      benchmark: 'fuzz',
      machine: machine(),
      method: `fast-check properties of test/unit/fuzz-*.test.ts, ${r3(perPropertyMs / 1000)} s each, random seed per property`,
      failedProperties: failed,
      results,
    },
    null,
    2,
  ),
);
process.exitCode = failed > 0 ? 1 : 0;
