/**
 * Runs a command of AIPerf's documentation as its reader would with tokenload: `aiperf` replaced by
 * `tokenload`, `--url localhost:8000` pointed at a simulator on 127.0.0.1, through the CLI's `main`
 * in this process, in a fresh working folder (so the default `artifacts/<run name>` lands there).
 * Tests run offline (no Hugging Face Hub), and a placeholder model (`your-model`) has no tokenizer
 * anywhere, so `--tokenizer builtin` is added unless the command names a tokenizer: AIPerf too needs
 * one it can load. `--client-warmup-ms 0` is added too unless the command names it or the test asks
 * for the default warm-up: the tests of the parallel group read counts, shapes and schedules that
 * say how many re-anchors they allow, not how early a cold client sends (the client warm-up is up to
 * 5 s of a busy core a run); a serial test of a schedule's shape keeps it.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliInProcess } from './cli-in-process.js';
import { type RunArtifacts, readRunArtifacts } from './run-artifacts.js';

/** What a documented command gave: its exit code, stderr, and the artifacts of its run folder. */
export interface DocRun<S> {
  code: number;
  stderr: string;
  /** The run folder, relative to the working folder (`artifacts/<run name>`). */
  runFolder: string;
  artifacts: RunArtifacts<S>;
}

/** How a documented command is run. */
export interface DocRunOptions {
  /** Keep the client warm-up at its default (else `--client-warmup-ms 0` is added). Default false. */
  clientWarmup?: boolean;
}

/** The arguments of a documented `aiperf profile …` command (backslash continuations allowed). */
export function docArgs(command: string, url: string, opts: DocRunOptions = {}): string[] {
  const words = command
    .replaceAll('\\\n', ' ')
    .split(/\s+/)
    .filter((w) => w !== '');
  if (words[0] !== 'aiperf') throw new Error(`not an aiperf command: ${command}`);
  const args = words.slice(1).map((w) => (w === 'localhost:8000' ? url : w));
  if (!args.includes('--url')) args.push('--url', url);
  if (!args.includes('--tokenizer')) args.push('--tokenizer', 'builtin');
  if (opts.clientWarmup !== true && !args.includes('--client-warmup-ms'))
    args.push('--client-warmup-ms', '0');
  return args;
}

/**
 * Runs `command` (with `aiperf` replaced) against `url` in a new working folder; returns what it gave.
 * @throws when the run left no run folder: the message has its exit code and stderr.
 */
export async function runDocCommand<S = Record<string, unknown>>(
  command: string,
  url: string,
  opts: DocRunOptions = {},
): Promise<DocRun<S>> {
  const cwd = process.cwd();
  const work = mkdtempSync(join(tmpdir(), 'tokenload-aiperf-doc-'));
  process.chdir(work);
  try {
    const args = docArgs(command, url, opts);
    const { code, stderr } = await runCliInProcess(args);
    const runFolder = runFolderOf(work, args);
    if (runFolder === null) throw new Error(`exit ${code}, no run folder: ${stderr}`);
    return { code, stderr, runFolder, artifacts: readRunArtifacts<S>(join(work, runFolder)) };
  } finally {
    process.chdir(cwd);
  }
}

/** The run folder `args` name (`--output-dir`, `--artifact-dir`), else the one folder under `artifacts/`. */
function runFolderOf(work: string, args: readonly string[]): string | null {
  for (const flag of ['--output-dir', '--artifact-dir', '--output-artifact-dir']) {
    const i = args.indexOf(flag);
    if (i >= 0)
      return existsSync(join(work, args[i + 1] as string, 'profile_export_aiperf.json'))
        ? (args[i + 1] as string)
        : null;
  }
  const folders = existsSync(join(work, 'artifacts')) ? readdirSync(join(work, 'artifacts')) : [];
  return folders.length === 1 ? join('artifacts', folders[0] as string) : null;
}
