/**
 * The configuration of one `tokenload profile` run: one zod schema ({@link ProfileConfigSchema}) is
 * the single source of every option's name, flag, type, unit, default, help text and cross-field
 * rule. The CLI's options, the `-f` config file, {@link profileConfig} for library callers and the
 * redacted `input_config` of the summary are all derived from it.
 */
import { ConfigError } from '../errors.js';
import { parseOptions } from '../util/option-meta.js';
import { type ProfileConfigInput, ProfileFieldsSchema } from './fields.js';
import { type ProfileConfig, resolve } from './resolve.js';
import { CONFIG_RULES } from './rules.js';

/**
 * The whole schema: fields, then every cross-field rule of `./rules.ts`, then the resolved
 * {@link ProfileConfig}. `parse` is idempotent: a resolved configuration parses to itself.
 */
export const ProfileConfigSchema = ProfileFieldsSchema.superRefine((fields, ctx) => {
  for (const r of CONFIG_RULES) {
    const message = r.check(fields);
    if (message !== null) ctx.addIssue({ code: 'custom', message, params: { option: r.option } });
  }
}).transform(resolve);

/**
 * A validated, complete {@link ProfileConfig} from any subset of options (library callers; the CLI
 * builds its configurations the same way).
 * @throws {ConfigError} (`E_CONFIG`) naming the option: a bad value (`--request-rate: expected a
 *   number > 0, got -1`), an unknown option, or a broken cross-field rule.
 */
export function profileConfig(input: ProfileConfigInput): ProfileConfig {
  return parseOptions(ProfileConfigSchema, input, (message, option) => new ConfigError(message, option));
}
