/**
 * `tokenload simulate`: runs the built-in OpenAI-compatible simulator in the foreground. Its flags
 * are generated from {@link SIMULATOR_OPTION_DOCS} and the zod schema, so `--help` lists every
 * parameter with its unit and default: `ttftMs` becomes `--ttft-ms <ms>`, a boolean that defaults
 * to true becomes `--no-<name>`, lists are comma-separated.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  SIMULATOR_OPTION_DOCS,
  type SimulatorOptionDoc,
  SimulatorOptionsSchema,
} from '../simulator/options.js';
import { startSimulator } from '../simulator/server.js';
import { kebab } from './parsers.js';
import { stderrLogger } from './profile-action.js';

/** `tokenload simulate` warms up for this long unless `--warmup-ms` says otherwise, ms. */
export const CLI_WARMUP_MS = 1000;

type FieldKind = 'number' | 'boolean' | 'string' | 'array' | 'enum';

interface ZodLike {
  def: { type: string; innerType?: ZodLike };
}

/** The base kind of a schema field, unwrapping default/optional wrappers. */
function fieldKind(name: string): FieldKind {
  let t = (SimulatorOptionsSchema.shape as Record<string, ZodLike>)[name];
  while (t !== undefined && (t.def.type === 'default' || t.def.type === 'optional') && t.def.innerType) {
    t = t.def.innerType;
  }
  const type = t?.def.type ?? 'string';
  if (type === 'number' || type === 'boolean' || type === 'array' || type === 'enum') return type;
  return 'string';
}

function parseNumber(flag: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n))
      throw new InvalidArgumentError(`--${flag}: expected a number, got "${v}".`);
    return n;
  };
}

function optionFor(doc: SimulatorOptionDoc): Option {
  const flag = kebab(doc.name);
  const kind = fieldKind(doc.name);
  const help = `${doc.description} [${doc.unit}; default ${doc.default}]`;
  if (kind === 'boolean') {
    return doc.default === 'true' ? new Option(`--no-${flag}`, help) : new Option(`--${flag}`, help);
  }
  const opt = new Option(`--${flag} <${doc.unit.replace(/[^a-z0-9/%]+/gi, '-')}>`, help);
  if (kind === 'number') return opt.argParser(parseNumber(flag));
  if (kind === 'array')
    return opt.argParser((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    );
  return opt;
}

/** Registers `simulate` on `program`; `setExit` receives the exit code. */
export function registerSimulateCommand(program: Command, setExit: (code: number) => void): void {
  const cmd = program
    .command('simulate')
    .description('Run the built-in KV-cache-aware OpenAI-compatible simulator (see docs/simulator.md).');
  for (const doc of SIMULATOR_OPTION_DOCS) cmd.addOption(optionFor(doc));
  cmd.action(async (flags: Record<string, unknown>) => {
    const parsed = SimulatorOptionsSchema.safeParse({ warmupMs: CLI_WARMUP_MS, ...flags });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = String(issue?.path[0] ?? '');
      process.stderr.write(`error: --${kebab(field)}: ${issue?.message ?? 'invalid value'}\n`);
      setExit(2);
      return;
    }
    const sim = await startSimulator(parsed.data);
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
