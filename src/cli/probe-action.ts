/**
 * `tokenload probe`: sends a handful of small requests to an endpoint and prints what it does (a
 * table, or `--json`; `-o FILE` also writes the JSON) and the profile flags that fit it. Its flags
 * come from {@link ProbeOptionsSchema}; the endpoint ones are `profile`'s. Exit codes as `profile`:
 * 0 when the probe ran (an endpoint answering with errors is a finding), 1 when nothing answers at
 * `--url`, the tokenizer cannot be loaded or `-o FILE` cannot be written, 2 for a usage error.
 */
import { constants } from 'node:fs';
import { access, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { ConfigError, OutputError } from '../errors.js';
import { ProbeOptionsSchema } from '../probe/options.js';
import { renderProbe } from '../probe/render.js';
import { runProbe } from '../probe/run-probe.js';
import { optionFields, parseOptions } from '../util/option-meta.js';
import { addSchemaOptions } from './schema-options.js';

/** Registers `probe` on `program`; `setExit` receives the exit code. */
export function registerProbeCommand(program: Command, setExit: (code: number) => void): void {
  const cmd = program
    .command('probe')
    .description(
      'Send a few small requests to an endpoint and print what it does (streaming, usage, reasoning, tool calls, errors, routes, keep-alive) and the profile flags that fit it.',
    );
  const flags = addSchemaOptions(cmd, optionFields(ProbeOptionsSchema));
  cmd.action(async () => {
    const options = parseOptions(ProbeOptionsSchema, flags.read(cmd), (m, o) => new ConfigError(m, o));
    if (options.output !== undefined) await checkWritable(options.output);
    const report = await runProbe(options);
    const json = `${JSON.stringify(report, null, 2)}\n`;
    // Printed first: a write that fails after all (a full disk) does not lose the findings.
    process.stdout.write(options.json ? json : renderProbe(report));
    if (options.output !== undefined)
      await writeFile(options.output, json).catch((err: unknown) => {
        throw outputError(options.output as string, err);
      });
    setExit(0);
  });
}

function outputError(path: string, err: unknown): OutputError {
  return new OutputError(`--output ${path}: cannot write (${(err as Error).message})`, '--output', err);
}

/**
 * Fails before anything is sent when `-o` cannot be written: its folder missing or not writable,
 * or the path a folder.
 * @throws {OutputError} (exit 1) naming `--output` and the path.
 */
async function checkWritable(path: string): Promise<void> {
  try {
    await access(dirname(path), constants.W_OK);
    const found = await stat(path).catch(() => null);
    if (found?.isDirectory() === true) throw new Error('it is a folder');
  } catch (err) {
    throw outputError(path, err);
  }
}
