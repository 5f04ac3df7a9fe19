/**
 * `tokenload analyze-trace FILE` and `tokenload synthesize-trace FILE --output OUT`: inspect a trace
 * before replaying it, or rewrite it with `profile`'s `--synthesis-*` options (the same flags, from the
 * profile schema). Exit codes: 0 done, 1 a bad trace or a failed write, 2 a usage error;
 * `analyze-trace --check` exits {@link EXIT_TRACE_CHECK_FIRED} when a check fired.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { formatAnalysis } from '../analyze/analyze-format.js';
import { analyzeTrace } from '../analyze/analyze-trace.js';
import { formatCheck } from '../analyze/check-format.js';
import { checkTraceFile } from '../analyze/check-trace.js';
import {
  SYNTHESIS_DATASET_TYPES,
  type SynthesisResult,
  synthesizeTrace,
} from '../analyze/synthesize-trace.js';
import { inputFields } from '../config/fields-input.js';
import { scheduleFields } from '../config/fields-schedule.js';
import { shardFields } from '../config/fields-shard.js';
import { type SynthesisFieldValues, synthesisFields, synthesisOf } from '../config/fields-synthesis.js';
import type { RuleInput } from '../config/rule-types.js';
import { synthesisRule } from '../config/rules-synthesis.js';
import { DATASET_TYPE_NAMES } from '../dataset/registry.js';
import type { TraceSynthesis } from '../dataset/types.js';
import { ConfigError, EXIT_TRACE_CHECK_FIRED } from '../errors.js';
import { optionFields } from '../util/option-meta.js';
import { integerAtLeast, oneOf } from './arg-parsers.js';
import { type CliIo, guarded, PROCESS_IO } from './cli-io.js';
import { addSchemaOptions } from './schema-options.js';

interface TraceFlags {
  customDatasetType: string;
  islBlockSize?: number;
}

/** The `--synthesis-*` options, from the profile schema (same names, help, defaults and checks). */
const SYNTHESIS_FIELDS = optionFields(z.object(synthesisFields));
/** The trace check's options, from the profile schema. */
const CHECK_FIELDS = optionFields(
  z.object({ maxContextLength: inputFields.maxContextLength, shardCount: shardFields.shardCount }),
);
const SPEEDUP_FIELDS = optionFields(
  z.object({ synthesisSpeedupRatio: scheduleFields.synthesisSpeedupRatio }),
);

/** The trace synthesis the typed `--synthesis-*` flags ask for, if any, checked against the dataset type. */
function synthesisFlags(values: SynthesisFieldValues, datasetType: string): TraceSynthesis | undefined {
  const problem = synthesisRule.check({ ...values, customDatasetType: datasetType } as RuleInput);
  if (problem !== null) throw new ConfigError(problem, synthesisRule.option);
  return synthesisOf(values);
}

interface AnalyzeFlags extends TraceFlags {
  json?: boolean;
  check?: boolean;
}

/**
 * `--check`: the trace check alone (streamed, memory bounded), printed; the exit code
 * {@link EXIT_TRACE_CHECK_FIRED} when a check fired, else 0.
 */
async function runCheck(
  file: string,
  flags: AnalyzeFlags,
  synthesis: TraceSynthesis | undefined,
  check: Record<string, unknown>,
  io: CliIo,
): Promise<number> {
  const r = await checkTraceFile(
    file,
    flags.customDatasetType,
    {
      ...(flags.islBlockSize === undefined ? {} : { blockSize: flags.islBlockSize }),
      ...(synthesis === undefined ? {} : { synthesis }),
    },
    {
      maxContextLength: check.maxContextLength as number | undefined,
      shardCount: check.shardCount as number | undefined,
    },
  );
  io.out(flags.json === true ? `${JSON.stringify(r, null, 2)}\n` : formatCheck(file, r));
  return r.findings.length > 0 ? EXIT_TRACE_CHECK_FIRED : 0;
}

/**
 * The trace check's own flags are read by `--check` alone; given without it they would change nothing.
 * @throws {ConfigError} naming the first such flag given.
 */
function refuseCheckFlags(values: Record<string, unknown>): void {
  for (const field of CHECK_FIELDS) {
    if (values[field.path.join('.')] === undefined) continue;
    const flag = `--${field.meta.flag}`;
    throw new ConfigError(
      `${flag} is read by the trace check only (analyze-trace --check); without --check it would change nothing: add --check or leave ${flag} out.`,
      flag,
    );
  }
}

function registerAnalyze(program: Command, setExit: (code: number) => void, io: CliIo): void {
  const cmd = program
    .command('analyze-trace')
    .description(
      'Describe a trace: sessions, turns, span, arrival rate, ISL/OSL, type mix, ideal prefix hit (after any --synthesis-* options); --check: what would distort its replay.',
    )
    .argument('<file>', 'trace file (JSONL)')
    .requiredOption(
      '--custom-dataset-type <type>',
      `trace format: ${DATASET_TYPE_NAMES.join(', ')}`,
      oneOf(DATASET_TYPE_NAMES),
    )
    .option('--isl-block-size <n>', 'tokens per hash_ids block (default: the format’s)', integerAtLeast(1))
    .option('--json', 'print JSON instead of text')
    .option(
      '--check',
      `check the trace instead (whole-second bursts, 0-token rows, rows over --max-context-length, quiet start, long gap, repeated ids, developer messages, uneven --shard-count shards): exit ${EXIT_TRACE_CHECK_FIRED} when a check fires, 0 when none does`,
    );
  const synthesis = addSchemaOptions(cmd, SYNTHESIS_FIELDS);
  const check = addSchemaOptions(cmd, CHECK_FIELDS);
  cmd.action(async (file: string, flags: AnalyzeFlags) => {
    let code = 0;
    const failed = await guarded(io, async () => {
      const s = synthesisFlags(synthesis.read(cmd), flags.customDatasetType);
      const checkValues = check.read(cmd);
      if (flags.check === true) {
        code = await runCheck(file, flags, s, checkValues, io);
        return;
      }
      refuseCheckFlags(checkValues);
      const a = await analyzeTrace(file, {
        datasetType: flags.customDatasetType,
        ...(flags.islBlockSize === undefined ? {} : { blockSize: flags.islBlockSize }),
        ...(s === undefined ? {} : { synthesis: s }),
      });
      io.out(flags.json === true ? `${JSON.stringify(a, null, 2)}\n` : formatAnalysis(a));
    });
    setExit(failed !== 0 ? failed : code);
  });
}

function describeResult(r: SynthesisResult): string {
  const parts = [`${r.rowsOut} of ${r.rowsIn} rows written to ${r.output}`];
  if (r.droppedOverMaxIsl > 0) parts.push(`${r.droppedOverMaxIsl} dropped over --synthesis-max-isl`);
  if (r.oslCapped > 0) parts.push(`${r.oslCapped} output lengths capped at --synthesis-max-osl`);
  if (r.promptUnscaled > 0) parts.push(`${r.promptUnscaled} rows without input_length left unscaled`);
  return `${parts.join('; ')}\n`;
}

function registerSynthesize(program: Command, setExit: (code: number) => void, io: CliIo): void {
  const cmd = program
    .command('synthesize-trace')
    .description(
      'Rewrite a trace with the --synthesis-* options of profile (same format); replaying it sends what profile with those options sends.',
    )
    .argument('<file>', 'trace file (JSONL)')
    .requiredOption(
      '--custom-dataset-type <type>',
      `trace format: ${SYNTHESIS_DATASET_TYPES.join(', ')}`,
      oneOf(SYNTHESIS_DATASET_TYPES),
    )
    .requiredOption('-o, --output <file>', 'output trace file');
  const speedup = addSchemaOptions(cmd, SPEEDUP_FIELDS);
  const synthesis = addSchemaOptions(cmd, SYNTHESIS_FIELDS);
  cmd.option('--isl-block-size <n>', 'tokens per hash_ids block (default: the format’s)', integerAtLeast(1));
  cmd.action(async (file: string, flags: TraceFlags & { output: string }) => {
    setExit(
      await guarded(io, async () => {
        const s = synthesisFlags(synthesis.read(cmd), flags.customDatasetType);
        const r = await synthesizeTrace(file, flags.output, {
          datasetType: flags.customDatasetType,
          speedupRatio: speedup.read(cmd).synthesisSpeedupRatio as number | undefined,
          blockSize: flags.islBlockSize,
          ...s,
        });
        io.out(describeResult(r));
      }),
    );
  });
}

/**
 * Registers `analyze-trace` and `synthesize-trace` on `program`; `setExit` receives the exit code;
 * `io` receives the text output (stdout/stderr by default).
 */
export function registerAnalyzeCommands(
  program: Command,
  setExit: (code: number) => void,
  io: CliIo = PROCESS_IO,
): void {
  registerAnalyze(program, setExit, io);
  registerSynthesize(program, setExit, io);
}
