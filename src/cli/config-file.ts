/**
 * `-f/--config FILE`: a YAML or JSON object of flag values, keyed by long flag name (`request-rate`,
 * `request_rate`, `requestRate` or `--request-rate` all work). Values become command-line tokens placed BEFORE the
 * real arguments, so flags typed on the command line win. `true` gives `--flag`, `false` gives
 * `--no-flag`, a list gives the flag once per element (repeatable flags) or comma-joined (sweeps).
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { parse as parseYaml } from 'yaml';

/** Flags whose list values are joined with commas (sweep lists) rather than repeated. */
const COMMA_LISTS = new Set(['concurrency', 'request-rate', 'model']);

function kebab(key: string): string {
  return key
    .replace(/^--/, '')
    .replaceAll('_', '-')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase();
}

function tokensFor(flag: string, value: unknown, file: string): string[] {
  if (value === true) return [`--${flag}`];
  if (value === false) return [`--no-${flag}`];
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) {
    if (COMMA_LISTS.has(flag)) return [`--${flag}`, value.map(String).join(',')];
    return value.flatMap((v) => [`--${flag}`, typeof v === 'object' ? JSON.stringify(v) : String(v)]);
  }
  if (typeof value === 'object') {
    if (flag === 'extra-inputs') return [`--${flag}`, JSON.stringify(value)];
    if (flag === 'header')
      return Object.entries(value).flatMap(([k, v]) => [`--${flag}`, `${k}:${String(v)}`]);
    throw new InvalidArgumentError(`${file}: key "${flag}" must not be an object.`);
  }
  return [`--${flag}`, String(value)];
}

/**
 * Reads a config file into argv tokens.
 * @throws {InvalidArgumentError} naming the file when it cannot be read or is not a YAML/JSON object.
 */
export function configFileTokens(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`--config ${file}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    throw new InvalidArgumentError(`--config ${file}: not valid YAML/JSON: ${(err as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new InvalidArgumentError(`--config ${file}: expected an object of flag: value pairs.`);
  }
  return Object.entries(data as Record<string, unknown>).flatMap(([k, v]) => tokensFor(kebab(k), v, file));
}

/**
 * Finds `-f FILE` / `--config FILE` / `--config=FILE` in argv (after the subcommand) and returns argv
 * with the file's tokens inserted right after the subcommand.
 */
export function expandConfigFile(argv: string[], subcommand: string): string[] {
  const sub = argv.indexOf(subcommand);
  if (sub < 0) return argv;
  for (let i = sub + 1; i < argv.length; i++) {
    const a = argv[i] as string;
    let file: string | undefined;
    if ((a === '-f' || a === '--config') && i + 1 < argv.length) file = argv[i + 1];
    else if (a.startsWith('--config=')) file = a.slice('--config='.length);
    if (file !== undefined)
      return [...argv.slice(0, sub + 1), ...configFileTokens(file), ...argv.slice(sub + 1)];
  }
  return argv;
}
