/**
 * The library contract: `import('tokenload')` resolves the built package entry from the package
 * root (as a user's project would), exports every process-level error class and the configuration
 * schema, and runs a tiny profile against its own simulator.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureBuilt } from '../helpers/built-package.js';

type Package = typeof import('../../src/index.js');
/** Through a variable, so the type checker does not resolve the package before it is built. */
const PACKAGE_NAME = 'tokenload';
ensureBuilt();
const load = (): Promise<Package> => import(PACKAGE_NAME) as Promise<Package>;

const ERROR_CLASSES = [
  'ConfigError',
  'OutputError',
  'DatasetError',
  'SyntheticOptionError',
  'TokenizerLoadError',
  'PromptSynthesisError',
  'ScheduleError',
  'ServerUnreachableError',
  'SimulatorSpawnError',
  'SynthesisError',
  'RunLoadError',
  'GoodputParseError',
] as const;

test('the package entry exports every error class, each a TokenloadError with a code', async () => {
  const pkg = await load();
  for (const name of ERROR_CLASSES) {
    const cls = pkg[name] as unknown as { prototype: object };
    assert.equal(typeof cls, 'function', name);
    assert.ok(cls.prototype instanceof pkg.TokenloadError, `${name} extends TokenloadError`);
  }
  assert.throws(
    () => pkg.profileConfig({ models: ['m'], requestRate: 0 }),
    (err: unknown) =>
      err instanceof pkg.ConfigError && err.code === 'E_CONFIG' && err.option === '--request-rate',
  );
  assert.equal(pkg.ProfileConfigSchema.safeParse({ models: ['m'] }).success, true);
});

test('a tiny profile through the package entry against its simulator', async () => {
  const pkg = await load();
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-pkg-'));
  const sim = await pkg.startSimulator({ mode: 'fixed', ttftMs: 2, itlMs: 1 });
  try {
    const outcome = await pkg.runProfile(
      {
        models: ['m'],
        tokenizer: 'builtin',
        url: sim.url,
        streaming: true,
        requestCount: 3,
        synthetic: { isl: 64, osl: 4 },
        clientWarmupMs: 0,
        ui: 'none',
        artifactDir: dir,
        randomSeed: 1,
      },
      { log: { info: () => undefined, warn: () => undefined }, stopSignal: new AbortController().signal },
    );
    assert.equal(outcome.inputError, null);
    const lines = readFileSync(join(dir, pkg.RECORDS_FILE_NAME), 'utf8').trim().split('\n');
    assert.equal(lines.length, 3);
    for (const line of lines) {
      const record = JSON.parse(line);
      assert.equal(record.error, null);
      assert.equal(record.metrics.output_sequence_length.value, 4);
    }
    // The report page as a string, written nowhere (docs/report.md: renderReportHtml(await loadRun(dir))).
    const html = pkg.renderReportHtml(await pkg.loadRun(dir));
    assert.match(html, /^<!doctype html>/i);
    assert.match(html, /id="summary"/);
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
