/**
 * A run's tokenizer: `--tokenizer` (default the model name) resolved to local files before anything
 * starts (prompt/tokenizer-source.ts), loaded once per process, with the chat template counter of
 * `--apply-chat-template`; and what the summary says about them.
 */

import type { RunPlan } from '../config/plan.js';
import { loadChatTemplate } from '../prompt/chat-template.js';
import { TemplateCounter } from '../prompt/template-count.js';
import { loadTokenizer, type TextTokenizer } from '../prompt/tokenizer.js';
import {
  describeTokenizer,
  resolveTokenizerSource,
  type TokenizerSource,
  tokenizerSection,
} from '../prompt/tokenizer-source.js';
import type { RunEnv } from '../util/run-env.js';
import type { RunContext } from './context.js';
import type { FinishInput } from './finish-input.js';

/**
 * Resolves the run's tokenizer to local files, downloading it into the Hugging Face cache if need
 * be (Ctrl-C aborts the download at once), and logs where it came from.
 * @throws {TokenizerLoadError} naming every path and URL tried, before anything is sent;
 *   {InterruptedError} when the run's stop signal aborted a download.
 */
export async function resolveRunTokenizer(config: RunPlan, env: RunEnv): Promise<TokenizerSource> {
  const defaulted = config.tokenizer === config.models[0];
  const source = await resolveTokenizerSource(config.tokenizer, {
    revision: config.tokenizerRevision,
    env: process.env,
    signal: env.stopSignal,
    log: env.log,
    label: defaulted
      ? `--model ${config.tokenizer} (the default --tokenizer)`
      : `--tokenizer ${config.tokenizer}`,
  });
  env.log.info(`tokenizer: ${describeTokenizer(tokenizerSection(source, null))}`);
  return source;
}

/**
 * Tokenizers loaded by earlier runs of this process, by path: a sweep (`--concurrency 1,4,16`) or
 * a library caller running many profiles loads each one once (0.3–0.7 s for Qwen3). A tokenizer
 * holds no per-run state.
 */
const loadedTokenizers = new Map<string, TextTokenizer>();

/**
 * Loads the resolved tokenizer and, with `--apply-chat-template`, its chat template counter (the
 * template rendered with `--extra-inputs chat_template_kwargs`, as the server renders it).
 * @throws {TokenizerLoadError} for unreadable files, or a tokenizer without a chat template.
 */
export function loadRunTokenizer(
  config: RunPlan,
  env: RunEnv,
  source: TokenizerSource,
): { tokenizer: TextTokenizer; templateCounter: TemplateCounter | null } {
  let tokenizer = loadedTokenizers.get(source.path);
  if (tokenizer === undefined) {
    tokenizer = loadTokenizer(source.path);
    loadedTokenizers.set(source.path, tokenizer);
  }
  if (!config.applyChatTemplate) return { tokenizer, templateCounter: null };
  const kwargs = config.extraInputs.chat_template_kwargs;
  const template = loadChatTemplate(source.path, isObject(kwargs) ? kwargs : {});
  const templateCounter = new TemplateCounter(template, tokenizer);
  env.log.info(`chat template: ${templateCounter.template.source} (ISL counts the templated prompt)`);
  return { tokenizer, templateCounter };
}

/**
 * What the end of the run reports about the tokenizer: the summary's `tokenizer` section, and the
 * prompts of the profiling phase the template could not fit (`shortBefore`: the counter's count
 * when that phase started).
 */
export function tokenizerFacts(
  ctx: RunContext,
  shortBefore: number,
): Pick<FinishInput, 'tokenizer' | 'template'> {
  const counter = ctx.templateCounter ?? null;
  const source = ctx.tokenizerSource;
  const out: Pick<FinishInput, 'tokenizer' | 'template'> = {};
  if (source !== undefined) out.tokenizer = tokenizerSection(source, counter?.template.source ?? null);
  if (counter !== null) out.template = { shorterThanTemplate: counter.shorterThanTemplate - shortBefore };
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
