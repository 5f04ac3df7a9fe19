/**
 * Mooncake `"message_mode": "delta"` sessions (AIPerf reference §1.5, §2.1) through the CLI against
 * simulators that answer a request declaring `tools` with a tool call (`tool-calls=when-tools`,
 * streamed as id and name first, then the arguments in pieces) and keep every body they received.
 * A delta session's later request must carry the earlier rows' messages, each followed by the live
 * assistant reply with its tool calls exactly as the simulator generated them (the simulator's own
 * non-streamed answer to the same body is the truth), then the row's new messages; later rows
 * inherit `tools`; a history-mode session is sent as stored; a failed reply adds nothing; and the
 * refusals name the file and line, a message content of another shape among them (at load, never a
 * client TypeError); a request whose body cannot be built is a failed request the progress does not
 * count in flight. Hand-written streams (the loopback fixture player) pin the
 * reassembly rules the simulator does not exercise: text beside the calls, parallel calls, a piece
 * without `index`, a call without `type`, the legacy `function_call`; the history sent is read in
 * the run's inputs.json.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { type FixturePlayer, inlineFixture, startFixturePlayer } from '../helpers/fixture-player.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

type Body = Record<string, unknown> & { messages: Message[] };
type Message = Record<string, unknown>;

const TOOLS = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
const AGENT = [
  {
    messages: [
      { role: 'system', content: 'You are a weather agent.' },
      { role: 'user', content: 'Weather in Paris?' },
    ],
    tools: TOOLS,
    output_length: 4,
  },
  // The recorded run's call id, sent as written (ids are not remapped).
  { messages: [{ role: 'tool', tool_call_id: 'call_recorded', content: 'sunny, 21 C' }], output_length: 3 },
  { messages: [{ role: 'user', content: 'And tomorrow?' }], output_length: 2 },
];
const PLAIN = [
  {
    messages: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'function', function: { name: 'lookup' } }],
  },
  { messages: [{ role: 'user', content: 'again' }] },
];

let sim: RunningSimulator;
let failing: RunningSimulator;
let work = '';

before(async () => {
  const base = { mode: 'fixed' as const, ttftMs: 1, itlMs: 0, toolCalls: 'when-tools' as const };
  [sim, failing] = await Promise.all([
    startSimulator(base, { captureRequests: true }),
    // Every stream fails with an in-band error after its first two tool-call pieces.
    startSimulator({ ...base, faultRateSseError: 1, faultAfterTokens: 2 }, { captureRequests: true }),
  ]);
  work = mkdtempSync(join(tmpdir(), 'tokenload-delta-'));
});
after(async () => {
  await Promise.all([sim?.close(), failing?.close()]);
});

/** Writes the rows (session, delta mode, 10 ms apart in file order) as a Mooncake trace. */
function trace(name: string, rows: Record<string, unknown>[]): string {
  const file = join(work, name);
  writeFileSync(file, `${rows.map((r, i) => JSON.stringify({ timestamp: i * 10, ...r })).join('\n')}\n`);
  return file;
}

const delta = (rows: Record<string, unknown>[], session = 'agent') =>
  rows.map((r) => ({ session_id: session, message_mode: 'delta', ...r }));

async function profile(server: { url: string }, file: string, dir: string, extra: string[] = []) {
  return runCliInProcess([
    ...['profile', '--client-warmup-ms', '0', '--ui', 'none', '--url', server.url, '--model', 'sim'],
    ...['--tokenizer', 'builtin', '--input-file', file, '--custom-dataset-type', 'mooncake_trace'],
    ...['--artifact-dir', join(work, dir), '--no-server-metrics', ...extra],
  ]);
}

/** The bodies `server` received for session `id` (its X-Correlation-ID), from capture `from` on, in order. */
function bodiesOf(server: RunningSimulator, id: string, from = 0): Body[] {
  return server
    .capturedRequests()
    .slice(from)
    .filter((r) => r.headers['x-correlation-id'] === id)
    .map((r) => JSON.parse(r.body) as Body);
}

/** The simulator's own non-streamed answer to `body`: its `choices[0].message`, the truth of a live reply. */
async function truth(body: Body): Promise<Message> {
  const { stream_options: _, ...rest } = body;
  const res = await fetch(`${sim.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...rest, stream: false }),
  });
  const answer = (await res.json()) as { choices: { message: Message }[] };
  return answer.choices[0]?.message as Message;
}

const own = (rows: typeof AGENT, k: number) => rows[k]?.messages as Message[];

test('streamed delta session: history with the live tool calls as streamed, tools inherited; history mode as stored', async () => {
  const from = sim.capturedRequests().length;
  const file = trace('mixed-sessions.jsonl', [
    ...delta(AGENT).slice(0, 1),
    { session_id: 'plain', ...PLAIN[0] },
    ...delta(AGENT).slice(1),
    { session_id: 'plain', ...PLAIN[1] },
  ]);
  const run = await profile(sim, file, 'streamed', ['--streaming', '--export-level', 'raw']);
  assert.equal(run.code, 0, run.stderr);
  const sent = bodiesOf(sim, 'agent', from);
  assert.equal(sent.length, 3);
  const [first, second, third] = sent as [Body, Body, Body];
  const reply1 = await truth(first);
  const reply2 = await truth(second);
  // The simulator answered with a tool call and no text: content null, one call of the declared tool.
  assert.equal(reply1.content, null);
  assert.equal((reply1.tool_calls as { function: { name: string } }[])[0]?.function.name, 'get_weather');
  assert.deepEqual(first.messages, own(AGENT, 0));
  assert.deepEqual(second.messages, [...own(AGENT, 0), reply1, ...own(AGENT, 1)]);
  assert.deepEqual(third.messages, [...own(AGENT, 0), reply1, ...own(AGENT, 1), reply2, ...own(AGENT, 2)]);
  for (const body of sent) assert.deepEqual(body.tools, TOOLS);
  // History mode: each row as stored, its own tools only.
  const plain = bodiesOf(sim, 'plain', from);
  assert.deepEqual(
    plain.map((b) => [b.messages, b.tools]),
    [
      [PLAIN[0]?.messages, PLAIN[0]?.tools],
      [PLAIN[1]?.messages, undefined],
    ],
  );
  // The records: the server's completion tokens as OSL, trusted (no usage fault against the stream),
  // and the call's name and arguments as the output text (what the raw export shows a user).
  const { records } = readRunArtifacts(join(work, 'streamed'));
  const agentRecords = records.filter((r) => r.metadata.conversation_id === 'agent');
  assert.deepEqual(
    agentRecords.map((r) => [
      r.metrics.output_sequence_length?.value,
      r.metadata.osl_source,
      (r as { stream_integrity?: { usage_untrusted?: unknown } }).stream_integrity?.usage_untrusted,
    ]),
    AGENT.map((row) => [row.output_length, 'server_usage', undefined]),
  );
  const raw = readFileSync(join(work, 'streamed', 'profile_export_raw.jsonl'), 'utf8')
    .trim()
    .split('\n');
  const firstRaw = raw
    .map((l) => JSON.parse(l) as { metadata: Message; responses: { text: string }[] })
    .find((l) => l.metadata.conversation_id === 'agent' && l.metadata.turn_index === 0);
  const call = (reply1.tool_calls as { function: { name: string; arguments: string } }[])[0];
  assert.ok(firstRaw !== undefined && call !== undefined);
  assert.ok(firstRaw.responses.length > 1, 'the call came in several chunks');
  assert.equal(firstRaw.responses.map((c) => c.text).join(''), call.function.name + call.function.arguments);
});

test('non-streamed delta session: choices[0].message with its tool_calls joins the history', async () => {
  const from = sim.capturedRequests().length;
  // With the client's chat template too: it renders the tool-call-only message (content null) as a server does.
  const run = await profile(sim, trace('agent.jsonl', delta(AGENT)), 'whole', ['--apply-chat-template']);
  assert.equal(run.code, 0, run.stderr);
  const sent = bodiesOf(sim, 'agent', from);
  assert.equal(sent.length, 3);
  const [first, second, third] = sent as [Body, Body, Body];
  assert.equal(first.stream, false);
  const reply1 = await truth(first);
  const reply2 = await truth(second);
  assert.deepEqual(third.messages, [...own(AGENT, 0), reply1, ...own(AGENT, 1), reply2, ...own(AGENT, 2)]);
});

test('a failed reply adds no assistant message: the next request carries the rows alone', async () => {
  const run = await profile(failing, trace('agent-failing.jsonl', delta(AGENT)), 'failing', ['--streaming']);
  const sent = bodiesOf(failing, 'agent');
  assert.equal(sent.length, 3, run.stderr);
  assert.deepEqual(sent[1]?.messages, [...own(AGENT, 0), ...own(AGENT, 1)]);
  assert.deepEqual(sent[2]?.messages, [...own(AGENT, 0), ...own(AGENT, 1), ...own(AGENT, 2)]);
  // The first two replies failed after two pieces of their tool call (the third, two tokens long, ended first).
  const { records } = readRunArtifacts(join(work, 'failing'));
  const failed = records.filter((r) => r.error !== null).map((r) => r.metadata.turn_index);
  assert.deepEqual(failed.sort(), [0, 1]);
});

test('refusals name the file and line: offsets, mixed message modes, extra.messages, --extra-inputs messages, another context mode', async () => {
  const agent = trace('agent-refused.jsonl', delta(AGENT));
  for (const offset of ['--fixed-schedule-start-offset', '--fixed-schedule-end-offset']) {
    const r = await profile(sim, agent, 'refused-offset', [offset, '5']);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /agent-refused\.jsonl:1: field "message_mode": a "delta" session cannot be replayed with --fixed-schedule-start-offset/,
    );
  }
  const inputs = await profile(sim, agent, 'refused-inputs', ['--extra-inputs', 'messages:[]']);
  assert.equal(inputs.code, 2);
  assert.match(inputs.stderr, /agent-refused\.jsonl:1: field "message_mode": .*--extra-inputs messages/);
  // A forced context mode other than the one a delta session is sent in, streamed or whole-file.
  for (const mode of ['message_array_with_responses', 'deltas_with_responses']) {
    for (const streaming of [[], ['--no-trace-streaming']]) {
      const r = await profile(sim, agent, `refused-mode-${mode}-${streaming.length}`, [
        ...['--conversation-context-mode', mode],
        ...streaming,
      ]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `agent-refused\\.jsonl:1: field "message_mode": a "delta" session cannot be sent with --conversation-context-mode ${mode}`,
        ),
      );
    }
  }
  const same = await profile(sim, agent, 'mode-same', [
    '--conversation-context-mode',
    'deltas_without_responses',
  ]);
  assert.equal(same.code, 0, same.stderr);
  const mixed = trace('mixed-modes.jsonl', [
    ...delta(AGENT).slice(0, 1),
    { session_id: 'agent', ...AGENT[1] },
  ]);
  const m = await profile(sim, mixed, 'refused-mixed', ['--no-trace-streaming']);
  assert.equal(m.code, 1);
  assert.match(m.stderr, /mixed-modes\.jsonl:2: field "message_mode": session "agent" mixes message modes/);
  const withExtra = trace('extra-messages.jsonl', delta([{ ...AGENT[0], extra: { messages: [] } }]));
  const e = await profile(sim, withExtra, 'refused-extra');
  assert.equal(e.code, 1);
  assert.match(e.stderr, /extra-messages\.jsonl:1: field "extra\.messages"/);
});

test('a message content of another shape is refused at load, naming file, line and field; tool-call and image shapes pass', async () => {
  const bad = { role: 'tool', tool_call_id: 'a', content: { x: 1 } };
  const tool = { role: 'tool', tool_call_id: 'c', content: 'ok' };
  const rows = [
    AGENT[0] as Record<string, unknown>,
    { messages: [{ role: 'user', content: 'x' }, tool, bad] },
  ];
  for (const mode of ['delta', 'history']) {
    const r = await profile(
      sim,
      trace(`object-content-${mode}.jsonl`, mode === 'delta' ? delta(rows) : rows),
      `object-${mode}`,
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `object-content-${mode}\\.jsonl:2: field "messages\\[2\\]\\.content": expected a string, null`,
      ),
    );
    assert.doesNotMatch(r.stderr, /TypeError|no request succeeded/);
  }
  const part = trace('part-without-text.jsonl', [
    { messages: [{ role: 'user', content: [{ type: 'text' }] }] },
  ]);
  const p = await profile(sim, part, 'part-without-text');
  assert.equal(p.code, 1);
  assert.match(
    p.stderr,
    /part-without-text\.jsonl:1: field "messages\[0\]\.content\[0\]\.text": expected a string/,
  );
  // An assistant message with tool calls and no content, and an image part, are sent as stored.
  const from = sim.capturedRequests().length;
  const shapes = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url: 'data:,' } },
      ],
    },
    {
      role: 'assistant',
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c', content: 'ok' },
  ];
  const ok = await profile(
    sim,
    trace('shapes.jsonl', [{ session_id: 'shapes', messages: shapes }]),
    'shapes',
  );
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(bodiesOf(sim, 'shapes', from)[0]?.messages, shapes);
});

test('a request that cannot be built is one failed request, and the progress never counts it in flight', async () => {
  const run = await runCliInProcess([
    ...['profile', '--client-warmup-ms', '0', '--ui', 'simple', '--url', sim.url, '--model', 'sim'],
    ...[
      '--tokenizer',
      'builtin',
      '--endpoint-type',
      'template',
      '--request-count',
      '2',
      '--concurrency',
      '1',
    ],
    // `text` without tojson: the rendered body is not JSON, so building each request throws.
    ...['--extra-inputs', 'payload_template:{"text": {{ text }}}', '--isl', '5', '--osl', '2'],
    ...['--artifact-dir', join(work, 'unbuilt'), '--no-server-metrics'],
  ]);
  assert.match(run.stderr, /did not render JSON/);
  assert.match(run.stderr, /progress: finished: done 2\/2 \| ok 0 \| errors 2 \| in flight 0\b/);
});

/** `data: <chunk>\n\n` of a chat chunk whose delta is `delta`. */
const sse = (delta: Message, finish: string | null = null): string =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/**
 * Plays `writes` (SSE events; or one whole JSON `body`) as the answer to both requests of a two-row
 * delta session and returns the assistant message the second request carried (from inputs.json).
 */
async function threadedReply(
  name: string,
  answer: string[] | { body: Message },
): Promise<Message | undefined> {
  const streamed = Array.isArray(answer);
  const stream = streamed ? [...answer, sse({}, 'tool_calls'), 'data: [DONE]\n\n'] : [];
  const fixture = inlineFixture(
    name,
    streamed
      ? {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          writes: stream.map((data, i) => ({ atMs: i, data })),
          end: 'close',
        }
      : { status: 200, headers: { 'content-type': 'application/json' }, body: answer.body },
    { stream: streamed },
  );
  const player: FixturePlayer = await startFixturePlayer([fixture]);
  try {
    const rows = delta(AGENT.slice(0, 2), name);
    const args = streamed ? ['--streaming'] : [];
    const run = await profile({ url: player.origin }, trace(`${name}.jsonl`, rows), name, args);
    assert.equal(run.code, 0, run.stderr);
  } finally {
    await player.close();
  }
  const inputs = JSON.parse(readFileSync(join(work, name, 'inputs.json'), 'utf8')) as {
    data: { payloads: Body[] }[];
  };
  const second = inputs.data[0]?.payloads[1];
  assert.deepEqual(second?.messages.slice(0, 2), own(AGENT, 0));
  assert.deepEqual(second?.messages.slice(3), own(AGENT, 1));
  return second?.messages[2];
}

test('reassembly: text beside the calls, parallel calls by index, a piece without index, type defaulted', async () => {
  const call = (piece: Message) => sse({ tool_calls: [piece] });
  const reply = await threadedReply('parallel', [
    sse({ role: 'assistant', content: 'Let me check.' }),
    call({ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }),
    call({ index: 0, function: { arguments: '{"city":' } }),
    call({ index: 1, id: 'call_b', function: { name: 'get_time', arguments: '{}' } }),
    call({ index: 0, function: { arguments: '"Paris"}' } }),
    call({ id: 'call_c', type: 'function', function: { name: 'note', arguments: '1' } }),
  ]);
  assert.deepEqual(reply, {
    role: 'assistant',
    content: 'Let me check.',
    tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      { id: 'call_c', type: 'function', function: { name: 'note', arguments: '1' } },
    ],
  });
});

test('reassembly: a cumulative stream (each event the reply so far, text and calls) threads the reply once, and the run says it was cumulative', async () => {
  const soFar = (args: string) => ({
    role: 'assistant',
    content: 'Let me check.',
    tool_calls: [
      { index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: args } },
    ],
  });
  const reply = await threadedReply('cumulative', [
    sse({ role: 'assistant', content: 'Let' }),
    sse({ role: 'assistant', content: 'Let me' }),
    sse({ role: 'assistant', content: 'Let me check.' }),
    ...['{"ci', '{"city":', '{"city":"Paris"}'].map((args) => sse(soFar(args))),
  ]);
  assert.deepEqual(reply, {
    role: 'assistant',
    content: 'Let me check.',
    tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ],
  });
  const summary = JSON.parse(readFileSync(join(work, 'cumulative', 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(summary.stream_integrity.cumulative, 2, 'both replies of the session came cumulative');
});

test('reassembly: a streamed legacy function_call becomes one function tool call, name and arguments joined', async () => {
  const reply = await threadedReply('legacy', [
    sse({ role: 'assistant', function_call: { name: 'get_', arguments: '' } }),
    sse({ function_call: { name: 'weather', arguments: '{"a":' } }),
    sse({ function_call: { arguments: '1}' } }),
  ]);
  assert.deepEqual(reply, {
    role: 'assistant',
    content: null,
    tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"a":1}' } }],
  });
});

test('reassembly: a whole answer gives its message: content, tool_calls (an arguments object as JSON), a legacy function_call after them', async () => {
  const message = {
    role: 'assistant',
    content: 'Checking.',
    tool_calls: [
      { index: 0, id: 'call_w', type: 'function', function: { name: 'lookup', arguments: { q: 'x' } } },
    ],
    function_call: { name: 'legacy', arguments: '{}' },
  };
  const body = { object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'tool_calls' }] };
  const reply = await threadedReply('whole-answer', { body });
  assert.deepEqual(reply, {
    role: 'assistant',
    content: 'Checking.',
    tool_calls: [
      { id: 'call_w', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
      { type: 'function', function: { name: 'legacy', arguments: '{}' } },
    ],
  });
});
