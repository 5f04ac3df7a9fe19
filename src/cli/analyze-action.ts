/**
 * `tokenload analyze-trace FILE` and `tokenload synthesize-trace FILE --output OUT`: inspect a trace
 * before replaying it, or rewrite it faster / longer / shorter. Exit codes: 0 done, 1 a bad trace or
 * a failed write, 2 a usage error.
 */
import type { Command } from 'commander';
import { formatAnalysis } from '../analyze/analyze-format.js';
import { analyzeTrace } from '../analyze/analyze-trace.js';
import {
  SYNTHESIS_DATASET_TYPES,
  type SynthesisResult,
  synthesizeTrace,
} from '../analyze/synthesize-trace.js';
import { DATASET_TYPE_NAMES } from '../dataset/registry.js';
import { integerAtLeast, oneOf, positiveNumber } from './arg-parsers.js';
import { type CliIo, guarded, PROCESS_IO } from './cli-io.js';

interface AnalyzeFlags {
  customDatasetType: string;
  islBlockSize?: number;
  json?: boolean;
}

function registerAnalyze(program: Command, setExit: (code: number) => void, io: CliIo): void {
  program
    .command('analyze-trace')
    .description(
      'Describe a trace: sessions, turns, span, arrival rate, ISL/OSL, type mix, ideal prefix hit.',
    )
    .argument('<file>', 'trace file (JSONL)')
    .requiredOption(
      '--custom-dataset-type <type>',
      `trace format: ${DATASET_TYPE_NAMES.join(', ')}`,
      oneOf(DATASET_TYPE_NAMES),
    )
    .option('--isl-block-size <n>', 'tokens per hash_ids block (default: the format’s)', integerAtLeast(1))
    .option('--json', 'print JSON instead of text')
    .action(async (file: string, flags: AnalyzeFlags) => {
      setExit(
        await guarded(io, async () => {
          const opts = { datasetType: flags.customDatasetType };
          const a = await analyzeTrace(
            file,
            flags.islBlockSize === undefined ? opts : { ...opts, blockSize: flags.islBlockSize },
          );
          io.out(flags.json === true ? `${JSON.stringify(a, null, 2)}\n` : formatAnalysis(a));
        }),
      );
    });
}

interface SynthesizeFlags {
  customDatasetType: string;
  output: string;
  synthesisSpeedupRatio?: number;
  synthesisPromptLenMultiplier?: number;
  synthesisOutputLenMultiplier?: number;
  synthesisMaxIsl?: number;
  synthesisMaxOsl?: number;
  islBlockSize?: number;
}

function describeResult(r: SynthesisResult): string {
  const parts = [`${r.rowsOut} of ${r.rowsIn} rows written to ${r.output}`];
  if (r.droppedOverMaxIsl > 0) parts.push(`${r.droppedOverMaxIsl} dropped over --synthesis-max-isl`);
  if (r.oslCapped > 0) parts.push(`${r.oslCapped} output lengths capped at --synthesis-max-osl`);
  if (r.promptUnscaled > 0) parts.push(`${r.promptUnscaled} rows without input_length left unscaled`);
  return `${parts.join('; ')}\n`;
}

function registerSynthesize(program: Command, setExit: (code: number) => void, io: CliIo): void {
  program
    .command('synthesize-trace')
    .description(
      'Rewrite a trace: timestamps ÷ speedup, prompt/output lengths × multipliers, caps (same format).',
    )
    .argument('<file>', 'trace file (JSONL)')
    .requiredOption(
      '--custom-dataset-type <type>',
      `trace format: ${SYNTHESIS_DATASET_TYPES.join(', ')}`,
      oneOf(SYNTHESIS_DATASET_TYPES),
    )
    .requiredOption('-o, --output <file>', 'output trace file')
    .option('--synthesis-speedup-ratio <x>', 'divide timestamps by x', positiveNumber)
    .option(
      '--synthesis-prompt-len-multiplier <m>',
      'multiply input_length (hash_ids follow)',
      positiveNumber,
    )
    .option('--synthesis-output-len-multiplier <m>', 'multiply output_length', positiveNumber)
    .option('--synthesis-max-isl <n>', 'drop rows whose trace input_length exceeds n', integerAtLeast(1))
    .option('--synthesis-max-osl <n>', 'cap output_length at n', integerAtLeast(1))
    .option('--isl-block-size <n>', 'tokens per hash_ids block (default: the format’s)', integerAtLeast(1))
    .action(async (file: string, flags: SynthesizeFlags) => {
      setExit(
        await guarded(io, async () => {
          const r = await synthesizeTrace(file, flags.output, {
            datasetType: flags.customDatasetType,
            speedupRatio: flags.synthesisSpeedupRatio,
            promptLenMultiplier: flags.synthesisPromptLenMultiplier,
            outputLenMultiplier: flags.synthesisOutputLenMultiplier,
            maxIsl: flags.synthesisMaxIsl,
            maxOsl: flags.synthesisMaxOsl,
            blockSize: flags.islBlockSize,
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
