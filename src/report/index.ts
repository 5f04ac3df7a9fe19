/**
 * Public surface of the report stage: read a run's artifacts, build charts, write the HTML report,
 * PNG plots and run comparisons.
 */
export type { ChartSpec } from './chart-base.js';
export { buildRunCharts } from './charts.js';
export { COMPARE_FILE_NAME, type CompareResult, compareRuns, renderCompareHtml } from './compare.js';
export { REPORT_FILE_NAME, renderReportHtml, type WrittenReport, writeReport } from './html.js';
export { loadRun, RUN_FILES } from './load-run.js';
export {
  DEFAULT_PLOT_SIZE,
  PLOTS_DIR_NAME,
  type PlotSize,
  type PlotsResult,
  renderChartSvg,
  writePlots,
} from './png.js';
export { readSearchHistory, SEARCH_HISTORY_FILE, type SearchHistory } from './search-history.js';
export {
  isSearchFolder,
  renderSearchReportHtml,
  writeSearchReport,
} from './search-html.js';
export * from './types.js';
