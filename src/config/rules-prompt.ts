/**
 * The cross-field rules of `--system-prompt` / `--system-prompt-file` (AIPerf's custom-dataset
 * tutorial, "Adding a System Prompt"): one of the two; not with another option filling the same
 * slot (the synthetic shared system prompt, the prefix pool); only on endpoint types that have a
 * system role; not on datasets whose request bodies are sent as written.
 */
import type { ConfigRule, RuleInput } from './rule-types.js';

/** Endpoint types whose requests carry a system message (chat's role, Responses' `instructions`, Messages' `system`). */
export const SYSTEM_ROLE_ENDPOINTS: readonly string[] = ['chat', 'responses', 'messages'];

/** Dataset types whose bodies are sent byte for byte, so no system message can be put on them. */
const VERBATIM_DATASET_TYPES: readonly string[] = ['inputs_json', 'raw_payload'];

/** The flag the run's system prompt was given with, or null. */
function systemFlag(c: RuleInput): string | null {
  if (c.systemPrompt !== undefined) return '--system-prompt';
  return c.systemPromptFile === undefined ? null : '--system-prompt-file';
}

/** The synthetic options that fill the system slot too, as given (non-zero). */
function slotFlags(c: RuleInput): string[] {
  const s = c.synthetic ?? {};
  const flags: string[] = [];
  if ((s.sharedSystemPromptLength ?? 0) > 0) flags.push('--shared-system-prompt-length');
  if ((s.numPrefixPrompts ?? 0) > 0) flags.push('--num-prefix-prompts');
  if ((s.prefixPromptLength ?? 0) > 0) flags.push('--prefix-prompt-length');
  return flags;
}

function systemPromptProblem(c: RuleInput): string | null {
  const flag = systemFlag(c);
  if (flag === null) return null;
  if (c.systemPrompt !== undefined && c.systemPromptFile !== undefined)
    return '--system-prompt and --system-prompt-file both give the system prompt: give one of them.';
  const slot = slotFlags(c);
  if (slot.length > 0)
    return `${flag} cannot be combined with ${slot.join(', ')}: they fill the same place at the start of every conversation; give one of them (${flag} combines with --user-context-prompt-length).`;
  if (!SYSTEM_ROLE_ENDPOINTS.includes(c.endpointType))
    return `${flag}: --endpoint-type ${c.endpointType} has no system role, so the text would be dropped; use --endpoint-type chat, responses or messages, or write the text at the start of each prompt in the input file.`;
  const type = c.customDatasetType;
  if (c.inputFile !== undefined && type !== undefined && VERBATIM_DATASET_TYPES.includes(type))
    return `${flag}: --custom-dataset-type ${type} sends each request body as written, so no system message can be added; write it into the bodies, or use single_turn or multi_turn.`;
  return null;
}

/** The rule of the system prompt options. */
export const systemPromptRule: ConfigRule = { option: '--system-prompt', check: systemPromptProblem };
