/**
 * Fuzzing, bounded: the SSE decoder on random bytes and truncated fixture streams in random reads,
 * and the record builder on random exchanges. `npm run fuzz` runs the same properties for longer.
 */
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type NamedProperty,
  recordBuilderProperty,
  sseRandomBytesProperty,
  sseTruncatedFixtureProperty,
} from '../helpers/fuzz-properties.js';

const RUNS = 500;
/** Bound on each test; a hang fails the test instead of stalling the suite. */
const TEST_TIMEOUT_MS = 60_000;

function check(p: NamedProperty): void {
  fc.assert(p.property, { numRuns: RUNS, seed: 20240601 });
}

test('SSE decoder: random bytes in random reads never throw; end() always returns', {
  timeout: TEST_TIMEOUT_MS,
}, () => {
  check(sseRandomBytesProperty());
});

test('SSE decoder: truncated fixture streams decode to a prefix of the whole stream', {
  timeout: TEST_TIMEOUT_MS,
}, () => {
  check(sseTruncatedFixtureProperty());
});

test('record builder: random exchanges never throw and yield exactly one classification', {
  timeout: TEST_TIMEOUT_MS,
}, () => {
  check(recordBuilderProperty());
});
