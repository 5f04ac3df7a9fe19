/**
 * Sweeps: a `--concurrency` or `--request-rate` list becomes one validated configuration per value,
 * each run in its own folder under the sweep's.
 */
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { stimulusName } from '../timing/registry.js';
import type { ProfileConfigInput } from './fields.js';
import { defaultArtifactDir, type ProfileConfig } from './resolve.js';
import { resolvesToFixedSchedule } from './rules.js';
import { profileConfig } from './schema.js';

/** A configuration whose `--concurrency` and `--request-rate` may be lists (a sweep). */
export type SweepInput = Omit<ProfileConfigInput, 'concurrency' | 'requestRate'> & {
  concurrency?: number | number[] | undefined;
  requestRate?: number | number[] | undefined;
};

const listOf = (v: number | number[] | undefined): Array<number | undefined> =>
  v === undefined ? [undefined] : Array.isArray(v) ? v : [v];

function checkSweep(concurrencies: unknown[], rates: unknown[], input: SweepInput): void {
  if (concurrencies.length > 1 && rates.length > 1)
    throw new ConfigError('sweep one of --concurrency or --request-rate, not both.', '--concurrency');
  const fixed = resolvesToFixedSchedule(input);
  if ((concurrencies.length > 1 || rates.length > 1) && input.startAtMs !== undefined)
    throw new ConfigError(
      '--start-at cannot be combined with a sweep: it is the start of one run (start each value with its own command).',
      '--start-at',
    );
  if (concurrencies.length > 1 && fixed)
    throw new ConfigError(
      'sweeps (lists in --concurrency) are not allowed with a fixed schedule.',
      '--concurrency',
    );
}

/**
 * One validated {@link ProfileConfig} per sweep value (one without a sweep). A sweep's runs go to
 * `<artifact dir>/<stimulus>/`, the artifact dir defaulting to `artifacts/<model>-openai-<endpoint>-sweep`.
 * @throws {ConfigError} naming the option, as {@link profileConfig}, or for a sweep of both lists.
 */
export function profileConfigs(input: SweepInput): ProfileConfig[] {
  const concurrencies = listOf(input.concurrency);
  const rates = listOf(input.requestRate);
  checkSweep(concurrencies, rates, input);
  const sweep = concurrencies.length > 1 || rates.length > 1;
  const out: ProfileConfig[] = [];
  for (const concurrency of concurrencies) {
    for (const requestRate of rates) {
      const config = profileConfig({ ...input, concurrency, requestRate } as ProfileConfigInput);
      if (sweep) {
        const root = input.artifactDir ?? defaultArtifactDir(config.models[0], config.endpointType, 'sweep');
        config.artifactDir = join(root, stimulusName(config));
      }
      out.push(config);
    }
  }
  return out;
}
