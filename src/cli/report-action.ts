/**
 * `tokenload report DIR`, `tokenload plot DIR` and `tokenload compare DIR_A DIR_B …`: turn finished
 * runs' artifacts into a self-contained HTML report, PNG plots, or a side-by-side comparison.
 * Exit codes: 0 done, 1 unreadable artifacts or a failed write, 2 a usage error.
 */
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { COMPARE_FILE_NAME, compareRuns } from '../report/compare.js';
import { type WrittenReport, writeReport } from '../report/html.js';
import { DEFAULT_PLOT_SIZE, writePlots } from '../report/png.js';
import { isSearchFolder, writeSearchReport } from '../report/search-html.js';
import { integerAtLeast, numberIn } from './arg-parsers.js';
import { type CliIo, guarded, PROCESS_IO } from './cli-io.js';

export { type WrittenReport, writeReport } from '../report/html.js';

/** Decimal units, as the profile footer: `1.37 MB`, `845 kB`, `512 B`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(2)} MB`;
  if (bytes >= 1e3) return `${Math.round(bytes / 1e3)} kB`;
  return `${bytes} B`;
}

/** The search report of a search folder (one holding `search_history.json`), timed as the run report. */
async function searchReport(dir: string, output: string | undefined): Promise<WrittenReport> {
  const started = performance.now();
  const path = await writeSearchReport(dir, output);
  return { path, bytes: (await stat(path)).size, ms: performance.now() - started };
}

function registerReport(program: Command, setExit: (code: number) => void, io: CliIo): void {
  program
    .command('report')
    .description(
      'Write a self-contained HTML report (charts, summary, errors, config) of a finished run, or of a search folder (holds search_history.json).',
    )
    .argument('<dir>', 'artifact directory of the run (holds profile_export.jsonl) or of a search')
    .option('-o, --output <file>', 'output file (default: <dir>/report.html)')
    .action(async (dir: string, flags: { output?: string }) => {
      setExit(
        await guarded(io, async () => {
          const r = isSearchFolder(dir)
            ? await searchReport(dir, flags.output)
            : await writeReport(dir, flags.output);
          io.out(`Report: ${r.path} (${formatBytes(r.bytes)}, built in ${Math.round(r.ms)} ms)\n`);
        }),
      );
    });
}

interface PlotFlags {
  width: number;
  height: number;
  scale: number;
}

function registerPlot(program: Command, setExit: (code: number) => void, io: CliIo): void {
  program
    .command('plot')
    .description('Write every chart of a finished run as PNG into <dir>/plots/ (echarts SSR + resvg).')
    .argument('<dir>', 'artifact directory of the run (holds profile_export.jsonl)')
    .option('--width <px>', 'plot width in CSS pixels', integerAtLeast(200), DEFAULT_PLOT_SIZE.widthPx)
    .option('--height <px>', 'plot height in CSS pixels', integerAtLeast(150), DEFAULT_PLOT_SIZE.heightPx)
    .option('--scale <n>', 'pixel density of the PNG', numberIn(0.5, 4), DEFAULT_PLOT_SIZE.scale)
    .action(async (dir: string, flags: PlotFlags) => {
      setExit(
        await guarded(io, async () => {
          const r = await writePlots(dir, {
            widthPx: flags.width,
            heightPx: flags.height,
            scale: flags.scale,
          });
          for (const f of r.files) io.out(`${f.path} (${formatBytes(f.bytes)})\n`);
          io.out(`${r.files.length} plots in ${r.dir} (${Math.round(r.ms)} ms)\n`);
        }),
      );
    });
}

function registerCompare(program: Command, setExit: (code: number) => void, io: CliIo): void {
  program
    .command('compare')
    .description(
      'Compare runs side by side (first = baseline): console table with deltas and ratios, plus compare.html.',
    )
    .argument('<dirs...>', 'two or more artifact directories')
    .option('-o, --output <file>', 'comparison page with overlaid CDFs', `./${COMPARE_FILE_NAME}`)
    .action(async (dirs: string[], flags: { output: string }) => {
      if (dirs.length < 2) {
        io.err('error: compare needs at least two artifact directories\n');
        setExit(2);
        return;
      }
      setExit(
        await guarded(io, async () => {
          const r = await compareRuns(dirs, flags.output);
          io.out(r.table);
          io.out(`Comparison page: ${r.htmlPath} (${formatBytes(r.htmlBytes)})\n`);
        }),
      );
    });
}

/**
 * Registers `report`, `plot` and `compare` on `program`; `setExit` receives the exit code; `io`
 * receives the text output (stdout/stderr by default).
 */
export function registerReportCommands(
  program: Command,
  setExit: (code: number) => void,
  io: CliIo = PROCESS_IO,
): void {
  registerReport(program, setExit, io);
  registerPlot(program, setExit, io);
  registerCompare(program, setExit, io);
}
