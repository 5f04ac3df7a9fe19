/**
 * tokenload's library API. The CLI is built only on what is exported here and from the stage
 * modules below; deep imports of other files are not part of the contract.
 *
 *     import { profileConfig, runProfile } from 'tokenload';
 *     const outcome = await runProfile(
 *       profileConfig({ models: ['Qwen/Qwen3-0.6B'], randomSeed: 1, inputFile: 'trace.jsonl',
 *                       customDatasetType: 'bailian_trace', fixedSchedule: true, streaming: true,
 *                       simulator: true, artifactDir: 'artifacts/run1' }),
 *       { log: console, stopSignal: new AbortController().signal });
 */

export type { HttpClient, SendRequest } from './client/types.js';
export { createHttpClient } from './client/undici-client.js';
export * from './dataset/index.js';
export type * from './dataset/types.js';
export { DatasetError } from './dataset/types.js';
export { ENDPOINTS } from './endpoint/registry.js';
export type { EndpointAdapter } from './endpoint/types.js';
export * from './export/index.js';
export * from './metrics/index.js';
export { PromptSynthesizer } from './prompt/synthesizer.js';
export { BUILTIN_TOKENIZER, loadTokenizer, type TextTokenizer } from './prompt/tokenizer.js';
export * from './record/index.js';
export type * from './record/types.js';
export * from './report/index.js';
export {
  type ProfileConfig,
  type ProfileConfigInput,
  ProfileConfigSchema,
  profileConfig,
  profileConfigs,
  type SweepInput,
} from './run/config.js';
export type { RunOutcome } from './run/finish.js';
export { type RunEnv, runProfile } from './run/profile.js';
export { type SimulatorOptions, SimulatorOptionsSchema } from './simulator/options.js';
export { startSimulator } from './simulator/server.js';
export { spawnSimulator } from './simulator/spawn.js';
export { type Clock, monotonicNowNs, TimeBase } from './timing/clock.js';
export { RealClock } from './timing/real-clock.js';
export { VirtualClock } from './timing/virtual-clock.js';
