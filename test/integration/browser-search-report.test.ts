/**
 * Issue 26 (`tokenload search`): the search report (`tokenload report` on a search folder) opened
 * in headless Chromium: no console errors, no network request, every SLO chart drawn with its
 * points, threshold and boundary (a line for a point, a band for a cliff); saves a screenshot to
 * test-artifacts/search-report.png.
 *
 * Needs /usr/bin/chromium. Without it the test is skipped locally and fails on CI (CI=true), where
 * the browser is installed.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import {
  BRACKETED,
  bracketedBoundary,
  SLAS,
  searchHistory,
  writeSearchFolder,
} from '../helpers/search-history.js';

const CHROMIUM = '/usr/bin/chromium';
const onCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const missing = !existsSync(CHROMIUM);
const skip =
  missing && !onCi
    ? `${CHROMIUM} not found; install it (apt-get install -y chromium) to run this test`
    : false;

interface ReadyState {
  charts: number;
  points: Record<string, number>;
}

/** What the page drew of one chart: its marks as echarts holds them after rendering. */
interface Drawn {
  canvas: number;
  lines: string[];
  bands: number[][];
}

async function reportOf(type: 'point' | 'cliff'): Promise<string> {
  const dir = writeSearchFolder(
    searchHistory({ probes: BRACKETED, boundary: bracketedBoundary(type, type === 'point' ? 21.5 : null) }),
    BRACKETED,
  );
  const r = await runCliInProcess(['report', dir]);
  assert.equal(r.code, 0, r.stderr);
  return join(dir, 'report.html');
}

async function openReport(
  context: BrowserContext,
  path: string,
  screenshot: string | null,
): Promise<Drawn[]> {
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  const network: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => consoleErrors.push(String(err)));
  page.on('request', (req) => {
    if (!req.url().startsWith('file:')) network.push(req.url());
  });
  await page.goto(pathToFileURL(path).href);
  await page.waitForFunction('window.__TOKENLOAD_REPORT_READY !== undefined', undefined, { timeout: 30_000 });
  const ready = (await page.evaluate('window.__TOKENLOAD_REPORT_READY')) as ReadyState;
  assert.deepEqual(consoleErrors, []);
  assert.deepEqual(network, [], 'the report loads nothing from the network');
  assert.equal(ready.charts, SLAS.length);
  for (const [id, points] of Object.entries(ready.points))
    assert.ok(points > 0, `${id}: drawn points ${points}`);
  const drawn = (await page.evaluate(`[...document.querySelectorAll('[data-chart-id]')].map((el) => {
    const c = echarts.getInstanceByDom(el);
    const s = c.getOption().series.find((x) => x.name.startsWith('threshold'));
    const canvas = el.querySelector('canvas');
    return {
      canvas: canvas ? canvas.width * canvas.height : 0,
      lines: ((s.markLine || {}).data || []).map((d) => d.name),
      bands: ((s.markArea || {}).data || []).map((d) => [d[0].xAxis, d[1].xAxis]),
    };
  })`)) as Drawn[];
  if (screenshot !== null) {
    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
  }
  await page.close();
  return drawn;
}

test('the search report renders its SLO charts in headless Chromium without console errors', {
  skip,
  timeout: 120_000,
}, async () => {
  assert.ok(!missing, `${CHROMIUM} is required on CI (CI=${process.env.CI}) but was not found`);
  const point = await reportOf('point');
  const cliff = await reportOf('cliff');
  const profile = mkdtempSync(join(tmpdir(), 'tokenload-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    viewport: { width: 1400, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
  });
  try {
    const atPoint = await openReport(context, point, 'test-artifacts/search-report.png');
    assert.equal(atPoint.length, SLAS.length);
    for (const c of atPoint) {
      assert.ok(c.canvas > 0, 'canvas drawn');
      assert.deepEqual(c.lines, ['boundary', 'fitted boundary']);
      assert.deepEqual(c.bands, []);
    }
    const atCliff = await openReport(context, cliff, null);
    for (const c of atCliff) {
      assert.deepEqual(c.lines, []);
      assert.deepEqual(c.bands, [[20, 24]]);
    }
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
