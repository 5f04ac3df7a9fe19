/**
 * PNG plots of a run (`tokenload plot DIR`): each chart is rendered to SVG by echarts' server-side
 * renderer and rasterised by resvg, into `DIR/plots/<chart id>.png`. echarts and resvg are imported
 * on first use, so the other commands do not pay for loading them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirs } from '../util/make-dir.js';
import type { ChartSpec } from './chart-base.js';
import { buildRunCharts } from './charts.js';
import { loadRun } from './load-run.js';

/** Size of a plot, CSS px; the PNG is `scale` times larger. */
export interface PlotSize {
  widthPx: number;
  heightPx: number;
  /** Pixel density of the PNG (2 = sharp on high-DPI screens). */
  scale: number;
}

/** Default plot size: 1000×500 at 2×. */
export const DEFAULT_PLOT_SIZE: PlotSize = { widthPx: 1000, heightPx: 500, scale: 2 };

/** Name of the folder the PNGs go into, inside the artifact directory. */
export const PLOTS_DIR_NAME = 'plots';

/** The SVG text of one chart, rendered by echarts SSR at `size` (CSS px). */
export async function renderChartSvg(chart: ChartSpec, size: PlotSize = DEFAULT_PLOT_SIZE): Promise<string> {
  const echarts = await import('echarts');
  const instance = echarts.init(null, null, {
    renderer: 'svg',
    ssr: true,
    width: size.widthPx,
    height: size.heightPx,
  });
  try {
    instance.setOption(chart.option);
    return instance.renderToSVGString();
  } finally {
    instance.dispose();
  }
}

/** Rasterises SVG text to PNG bytes, `widthPx` wide (system fonts; DejaVu/Liberation on Debian). */
export async function svgToPng(svg: string, widthPx: number): Promise<Buffer> {
  const { Resvg } = await import('@resvg/resvg-js');
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'width', value: widthPx },
    background: '#ffffff',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}

/** One written PNG. */
export interface WrittenPlot {
  id: string;
  path: string;
  bytes: number;
}

/** Result of {@link writePlots}. */
export interface PlotsResult {
  dir: string;
  files: WrittenPlot[];
  /** Wall time of loading, rendering and writing, ms. */
  ms: number;
}

/**
 * Writes every chart of the run in `artifactDir` as `artifactDir/plots/<id>.png` (folder created).
 * @throws {RunLoadError} when the run cannot be read; the file system error of a failed write.
 */
export async function writePlots(
  artifactDir: string,
  size: PlotSize = DEFAULT_PLOT_SIZE,
): Promise<PlotsResult> {
  const started = performance.now();
  const run = await loadRun(artifactDir);
  const dir = join(artifactDir, PLOTS_DIR_NAME);
  await makeDirs(dir);
  const files: WrittenPlot[] = [];
  for (const chart of buildRunCharts(run)) {
    const png = await svgToPng(await renderChartSvg(chart, size), size.widthPx * size.scale);
    const path = join(dir, `${chart.id}.png`);
    await writeFile(path, png);
    files.push({ id: chart.id, path, bytes: png.length });
  }
  return { dir, files, ms: performance.now() - started };
}
