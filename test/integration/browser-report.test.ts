/**
 * Issue "Reports people would rather look at than read": report.html from a real short run, opened
 * in headless Chromium. Checks what a user would see: no console errors, every chart drawn with data,
 * no network request; saves a screenshot to test-artifacts/report.png.
 *
 * Needs /usr/bin/chromium. Without it the test is skipped locally and fails on CI (CI=true), where
 * the browser is installed.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { writeReport } from '../../src/report/html.js';
import { runProfile } from '../../src/run/profile.js';
import { simulatorReplayConfig } from '../helpers/replay-config.js';

const CHROMIUM = '/usr/bin/chromium';
const onCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const missing = !existsSync(CHROMIUM);
const skip =
  missing && !onCi
    ? `${CHROMIUM} not found; install it (apt-get install -y chromium) to run this test`
    : false;

function config(artifactDir: string): ProfileConfig {
  return simulatorReplayConfig(artifactDir, 'examples/traces/bailian_traceA_multiturn_head40.jsonl', 40, {
    commandLine: 'tokenload profile (browser-report test)',
    // Slices too, so their charts are drawn in the browser.
    sliceDurationSeconds: 1,
  });
}

interface ReadyState {
  charts: number;
  points: Record<string, number>;
}

test('report.html renders every chart in headless Chromium without console errors', {
  skip,
  timeout: 120_000,
}, async () => {
  assert.ok(!missing, `${CHROMIUM} is required on CI (CI=${process.env.CI}) but was not found`);
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-browser-report-'));
  const silent = { info: () => undefined, warn: () => undefined };
  await runProfile(config(dir), { log: silent, stopSignal: new AbortController().signal });
  const report = await writeReport(dir);
  const html = readFileSync(report.path, 'utf8');
  const declared = [...html.matchAll(/data-chart-id="([^"]+)" data-points="(\d+)"/g)].map((m) => ({
    id: m[1] as string,
    points: Number(m[2]),
  }));
  assert.ok(declared.length >= 10, `charts declared: ${declared.length}`);

  const profile = mkdtempSync(join(tmpdir(), 'tokenload-chromium-'));
  // A fresh profile directory (playwright's form of --user-data-dir).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    viewport: { width: 1400, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
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
    await page.goto(pathToFileURL(report.path).href);
    await page.waitForFunction('window.__TOKENLOAD_REPORT_READY !== undefined', undefined, {
      timeout: 30_000,
    });
    const ready = (await page.evaluate('window.__TOKENLOAD_REPORT_READY')) as ReadyState;

    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(network, [], 'the report loads nothing from the network');
    assert.equal(ready.charts, declared.length);
    for (const { id, points } of declared) {
      assert.ok(points > 0, `${id}: data-points ${points}`);
      assert.ok((ready.points[id] ?? 0) > 0, `${id}: drawn points ${ready.points[id]}`);
      const size = await page.evaluate(
        `(() => { const c = document.querySelector('#chart-${id} canvas'); return c ? c.width * c.height : 0; })()`,
      );
      assert.ok((size as number) > 0, `${id}: canvas drawn`);
    }
    const summaryText = await page.textContent('#summary');
    assert.match(summaryText ?? '', /Time to First Token \(ms\)/);

    // The page leads with the load line and the client-health verdict, above the summary table.
    const lead = (await page.textContent('#lead')) ?? '';
    assert.match(lead, /^\s*Load: fixed schedule .*\n?\s*Client health: (ok|busy|late|saturated)/s);
    // The per-chunk inter-chunk latency is drawn beside the per-request ITL, and CDFs mark p50/p90/p99.
    assert.ok(
      declared.some((c) => c.id === 'icl-cdf'),
      'icl-cdf declared',
    );
    const marked = await page.evaluate(`['ttft-cdf', 'itl-cdf', 'icl-cdf', 'latency-cdf'].map((id) => {
      const c = echarts.getInstanceByDom(document.querySelector('#chart-' + id));
      return c.getOption().series[0].markLine.data.map((d) => d.name).join(',');
    })`);
    assert.deepEqual(marked, Array(4).fill('p50,p90,p99'));
    // The time charts share one axis and zoom together: zooming one zooms the others the same way.
    const extents = (await page.evaluate(`(() => {
      const chart = (id) => echarts.getInstanceByDom(document.querySelector('#chart-' + id));
      const extent = (id) => chart(id).getModel().getComponent('xAxis', 0).axis.scale.getExtent();
      const before = ['ttft-over-time', 'in-flight-over-time', 'schedule-lag-over-time'].map(extent);
      chart('ttft-over-time').dispatchAction({ type: 'dataZoom', start: 25, end: 50 });
      const after = ['ttft-over-time', 'in-flight-over-time', 'schedule-lag-over-time'].map(extent);
      chart('ttft-over-time').dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
      return { before, after };
    })()`)) as { before: number[][]; after: number[][] };
    for (const e of extents.before) assert.deepEqual(e, extents.before[0]);
    for (const e of extents.after) assert.deepEqual(e, extents.after[0]);
    const [lo, hi] = extents.before[0] as number[];
    const span = (hi as number) - (lo as number);
    assert.deepEqual(extents.after[0], [(lo as number) + span / 4, (lo as number) + span / 2]);

    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/report.png', fullPage: true });
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
