/**
 * `tokenload simulate`: runs the built-in OpenAI-compatible simulator in the foreground. Its flags,
 * units, defaults and help come from {@link SimulatorOptionsSchema}'s option metadata: `ttftMs`
 * becomes `--ttft-ms <ms>`, a boolean that defaults to true also gets `--no-<name>`, lists are
 * comma-separated.
 */
import type { Command } from 'commander';
import { ConfigError, TokenloadError } from '../errors.js';
import { resolveTokenizerSource } from '../prompt/tokenizer-source.js';
import { CLI_SIMULATOR_WARMUP_MS, SimulatorOptionsSchema } from '../simulator/options.js';
import { startSimulator } from '../simulator/server.js';
import { optionFields, parseOptions } from '../util/option-meta.js';
import { stderrLogger } from './profile-action.js';
import { addSchemaOptions } from './schema-options.js';

/** Registers `simulate` on `program`; `setExit` receives the exit code. */
export function registerSimulateCommand(program: Command, setExit: (code: number) => void): void {
  const cmd = program
    .command('simulate')
    .description('Run the built-in KV-cache-aware OpenAI-compatible simulator (see docs/simulator.md).');
  const flags = addSchemaOptions(cmd, optionFields(SimulatorOptionsSchema), {
    warmupMs: CLI_SIMULATOR_WARMUP_MS,
  });
  cmd.action(async () => {
    const options = parseOptions(
      SimulatorOptionsSchema,
      { warmupMs: CLI_SIMULATOR_WARMUP_MS, ...flags.read(cmd) },
      (message, option) => new ConfigError(message, option),
    );
    // A Hub model id resolves as the profile's --tokenizer does (cache, then Hub; prompt/tokenizer-source.ts).
    const source = await resolveTokenizerSource(options.tokenizer, {
      revision: 'main',
      env: process.env,
      log: stderrLogger,
      // The simulator sends nothing: its errors do not say "nothing was sent".
      beforeSending: false,
    });
    const sim = await startSimulator({ ...options, tokenizer: source.path }).catch((err: unknown) => {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw err;
      throw new TokenloadError(
        'E_SIMULATOR',
        `--host ${options.host} --port ${options.port}: cannot listen (${code})`,
        {
          cause: err,
        },
      );
    });
    stderrLogger.info(`simulator listening on ${sim.url} (Ctrl-C to stop)`);
    await new Promise<void>((resolve) => {
      const stop = (): void => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await sim.close();
    setExit(0);
  });
}
