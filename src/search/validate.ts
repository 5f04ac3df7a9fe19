/**
 * Checks a search against the `profile` options it runs with, before anything is sent: the searched
 * option is the search's to set, a speedup search needs a timestamped trace replayed on a fixed
 * schedule, and a probe at either end of the range must be a valid run.
 */
import type { ProfileConfigInput } from '../config/fields.js';
import { resolvesToFixedSchedule } from '../config/rules.js';
import { profileConfig } from '../config/schema.js';
import type { SweepInput } from '../config/sweep.js';
import { anyRowTimestamped } from '../dataset/timestamp-scan.js';
import { ConfigError } from '../errors.js';
import { goodputTags } from '../metrics/goodput.js';
import { metricByTag } from '../metrics/registry.js';
import { type SearchSpec, SWEPT_FIELD, SWEPT_FLAG } from './config.js';
import { probeInput } from './probe-run.js';

/**
 * The profile input every probe starts from (`--num-profile-runs` removed: it is the search's trials).
 * @throws {ConfigError} naming the flag: the searched option given (the search sets it), a list in
 *   `--concurrency` / `--request-rate`, a speedup search without a fixed schedule or timestamps,
 *   `--goodput` beside `--slo-attainment-fraction`, or a probe at `lo` or `hi` that is not a valid run.
 */
export function checkSearchInput(input: SweepInput, spec: SearchSpec): ProfileConfigInput {
  const field = SWEPT_FIELD[spec.searchOver];
  if ((input as Record<string, unknown>)[field] !== undefined)
    throw new ConfigError(
      `${SWEPT_FLAG[spec.searchOver]} cannot be given with --search-over ${spec.searchOver}: the search sets it (give the range in --search-range)`,
      SWEPT_FLAG[spec.searchOver],
    );
  for (const [key, flag] of [
    ['concurrency', '--concurrency'],
    ['requestRate', '--request-rate'],
  ] as const)
    if (Array.isArray(input[key]))
      throw new ConfigError(
        `${flag}: a list (a sweep) cannot be searched; give one value, or search it with --search-over`,
        flag,
      );
  if (spec.searchOver === 'speedup') checkReplay(input);
  const profile = withAttainment({ ...input, numProfileRuns: undefined } as ProfileConfigInput, spec);
  for (const load of [spec.lo, spec.hi])
    profileConfig(probeInput(profile, spec, { load, dir: '.', seed: 0 }));
  return profile;
}

/** A speedup search replays a timestamped trace on a fixed schedule. */
function checkReplay(input: SweepInput): void {
  const file = input.inputFile;
  if (typeof file !== 'string')
    throw new ConfigError(
      '--search-over speedup searches the speed of a trace replay: give a timestamped trace (--input-file, e.g. a mooncake_trace or bailian_trace) with --fixed-schedule; synthetic prompts have no schedule (search --request-rate or --concurrency)',
      '--search-over',
    );
  if (!resolvesToFixedSchedule(input))
    throw new ConfigError(
      `--search-over speedup needs --fixed-schedule: ${file} would be sent by --concurrency or --request-rate, not on its timestamps`,
      '--fixed-schedule',
    );
  if (!anyRowTimestamped(file))
    throw new ConfigError(
      `--search-over speedup: no row of ${file} has a timestamp, so there is no schedule to speed up (search --request-rate or --concurrency)`,
      '--search-over',
    );
}

/**
 * The probe input with `--goodput` set from the per-request SLOs when `--slo-attainment-fraction` is
 * given (the summary's `good_request_fraction` is then the attainment).
 * @throws {ConfigError} when `--goodput` is given too, or no SLO is per-request.
 */
function withAttainment(profile: ProfileConfigInput, spec: SearchSpec): ProfileConfigInput {
  if (spec.attainmentFraction === null) return profile;
  if (profile.goodput !== undefined)
    throw new ConfigError(
      '--goodput cannot be given with --slo-attainment-fraction: the search sets it from the per-request SLOs',
      '--goodput',
    );
  const perRequest = spec.slas.filter((s) => goodputTags().includes(s.metric_tag));
  for (const s of perRequest) {
    const larger = metricByTag(s.metric_tag)?.flags.largerIsBetter === true;
    if (larger !== (s.op === 'gt' || s.op === 'ge'))
      throw new ConfigError(
        `--slo-attainment-fraction: ${s.metric_tag}:${s.stat}:${s.op}:${s.threshold} asks for ${larger ? 'at most' : 'at least'} the threshold, and a request meets a goodput SLO on ${s.metric_tag} only with ${larger ? 'at least' : 'at most'} it`,
        '--slo-attainment-fraction',
      );
  }
  if (perRequest.length === 0)
    throw new ConfigError(
      '--slo-attainment-fraction needs an SLO on a per-request metric (e.g. --ttft-sla-ms, --e2e-sla-ms)',
      '--slo-attainment-fraction',
    );
  return { ...profile, goodput: perRequest.map((s) => `${s.metric_tag}:${s.threshold}`).join(' ') };
}
