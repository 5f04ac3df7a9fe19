/**
 * A request the run's sender cannot build (here a hash_ids layout too long for its input length,
 * which the loaders reject but a hand-built dataset can hold) is never sent: it is recorded as a
 * `client_error` with the failure table's code (no HTTP status: no server answered), the
 * exception's name and message, and the request's identity.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HttpClient } from '../../src/client/types.js';
import { planRun } from '../../src/config/plan.js';
import { profileConfig } from '../../src/config/schema.js';
import type { Conversation, Turn } from '../../src/dataset/types.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import { PromptSynthesizer } from '../../src/prompt/synthesizer.js';
import { loadTokenizer } from '../../src/prompt/tokenizer.js';
import { FAILURE_CODES } from '../../src/record/failure.js';
import type { RawRecord } from '../../src/record/types.js';
import { createSender } from '../../src/request/sender.js';
import { VirtualClock } from '../../src/timing/virtual-clock.js';

test('a request that cannot be built is recorded as a client_error and never sent', async () => {
  const tokenizer = loadTokenizer();
  const synthesizer = PromptSynthesizer.create(tokenizer, 1);
  const prompt = { kind: 'synthetic', inputLength: 10, hashIds: [1, 2, 3], blockSize: 16 } as const;
  const thrown = ((): unknown => {
    try {
      synthesizer.synthesize(prompt.inputLength, prompt.hashIds, prompt.blockSize, 'probe');
    } catch (err) {
      return err;
    }
    return undefined;
  })();
  assert.ok(thrown instanceof Error, 'the layout cannot be synthesized');
  const records: RawRecord[] = [];
  let sent = 0;
  const client: HttpClient = {
    send: () => {
      sent++;
      return Promise.reject(new Error('must not be sent'));
    },
    close: () => Promise.resolve(),
  };
  const dispatch = createSender({
    config: planRun(profileConfig({ models: ['m'], randomSeed: 1 })),
    client,
    adapter: ENDPOINTS.chat,
    servers: [{ url: 'http://localhost:8000', path: '/v1/chat/completions' }],
    synthesizer,
    tokenizer,
    cancelSignal: new AbortController().signal,
    clock: new VirtualClock(),
    onBody: () => undefined,
    onRecord: (raw) => {
      records.push(raw);
    },
  });
  const turn: Turn = { index: 0, prompt, maxTokens: 5, source: { file: 'hand-built', line: 1 } };
  const conversation: Conversation = { id: 'c1', turns: [turn], contextMode: 'message_array_with_responses' };
  await dispatch.prepare({ conversation, turn, sessionNum: 3, scheduledNs: 42 }).send();

  assert.equal(sent, 0);
  assert.equal(records.length, 1);
  const raw = records[0] as RawRecord;
  assert.deepEqual(
    { kind: raw.error?.kind, code: raw.error?.code, type: raw.error?.type, message: raw.error?.message },
    { kind: 'client_error', code: FAILURE_CODES.client_error, type: thrown.name, message: thrown.message },
  );
  assert.deepEqual(
    [raw.conversationId, raw.turnIndex, raw.sessionNum, raw.scheduledNs, raw.requestedOutputTokens],
    [conversation.id, turn.index, 3, 42, turn.maxTokens],
  );
  assert.equal(raw.httpStatus, null);
  assert.equal(raw.chunks.length, 0);
  assert.ok(raw.startNs <= (raw.error?.failedAtNs ?? -1) && raw.error?.failedAtNs === raw.endNs);
});
