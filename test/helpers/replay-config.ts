/**
 * The configuration the replay integration tests share: a Bailian sample replayed with streaming
 * chat against the spawned built-in simulator, quiet, seed 7, with neither the simulator's nor the
 * client's warm-up (1 s and 0.5 s of CPU a run, for a few dozen requests that need no warm code).
 */

import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';

/**
 * Replay of `inputFile` at `speedup`× into `artifactDir`; `overrides.simulatorOptions` add to the
 * defaults.
 */
export function simulatorReplayConfig(
  artifactDir: string,
  inputFile: string,
  speedup: number,
  overrides: Partial<ProfileConfig> = {},
): ProfileConfig {
  return profileConfig({
    models: ['Qwen/Qwen3-0.6B'],
    randomSeed: 7,
    streaming: true,
    inputFile,
    customDatasetType: 'bailian_trace',
    fixedSchedule: true,
    synthesisSpeedupRatio: speedup,
    requestTimeoutSeconds: 60,
    artifactDir,
    simulator: true,
    gracePeriodSeconds: 5,
    clientWarmupMs: 0,
    ...overrides,
    // A run pointed at a server of the test's own (`simulator: false`) takes no simulator options.
    ...(overrides.simulator === false
      ? {}
      : { simulatorOptions: { warmupMs: 0, ...overrides.simulatorOptions } }),
  });
}
