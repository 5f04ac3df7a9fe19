/**
 * AIPerf's endpoint types tokenload does not take (src/endpoint/aiperf-only.ts) are refused before
 * anything runs, with exit 2 and a sentence naming the type, why, and the nearest tokenload way:
 * on the command line, in a `-f` config file and through the library's `profileConfig`. An unknown
 * name that is not AIPerf's still gets the list of types.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AIPERF_ONLY_ENDPOINT_TYPES } from '../../src/endpoint/aiperf-only.js';
import { ConfigError, profileConfig } from '../../src/index.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-refused-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const REFUSED = Object.entries(AIPERF_ONLY_ENDPOINT_TYPES);

test("the table holds the types of AIPerf's docs that tokenload lacks", () => {
  for (const name of ['video_generation', 'echo', 'solido_rag', 'image_edit', 'raw'])
    assert.ok(Object.hasOwn(AIPERF_ONLY_ENDPOINT_TYPES, name), name);
});

for (const [name, missing] of REFUSED) {
  test(`--endpoint-type ${name}: exit 2 with the reason and the nearest way, nothing run`, async () => {
    const run = await runCliInProcess([
      'profile',
      '-m',
      'm',
      '--endpoint-type',
      name,
      '--simulator',
      '--request-count',
      '1',
      '--artifact-dir',
      join(dir, name),
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(`--endpoint-type ${name} is AIPerf's endpoint type; tokenload does not take it`),
    );
    assert.ok(run.stderr.includes(missing.why), run.stderr);
    assert.ok(run.stderr.includes(missing.instead), run.stderr);
    assert.doesNotMatch(run.stderr, /Allowed choices/);
  });
}

test('a refused type in a -f config file and in profileConfig says the same', async () => {
  const file = join(dir, 'cfg.yaml');
  writeFileSync(file, 'model: m\nendpoint-type: video_generation\n');
  const run = await runCliInProcess(['profile', '-f', file, '--simulator']);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /video_generation is AIPerf's endpoint type; tokenload does not take it: .*polls/);
  assert.throws(
    () => profileConfig({ models: ['m'], endpointType: 'echo' as never }),
    (err: unknown) =>
      err instanceof ConfigError &&
      /echo is AIPerf's endpoint type; tokenload does not take it/.test(err.message),
  );
});

test('a name AIPerf does not have either is answered with the list of types', async () => {
  const run = await runCliInProcess(['profile', '-m', 'm', '--endpoint-type', 'chatt', '--simulator']);
  assert.equal(run.code, 2);
  assert.match(
    run.stderr,
    /expected one of chat, completions, .*chat_embeddings, nim_embeddings, image_generation, template, got "chatt"/,
  );
});
