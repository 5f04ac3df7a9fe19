/** The start of every {@link RawRecord}: the request's identity, nothing observed yet. */
import type { RawRecord, RequestIdentity } from './types.js';

/**
 * A record of `identity` with nothing observed yet: start and end 0, no response, no chunks, no
 * error. The client fills it as the exchange goes on; `finishRecord` (failure.ts) finishes it.
 */
export function emptyRecord(id: RequestIdentity): RawRecord {
  const raw: RawRecord = {
    conversationId: id.conversationId,
    turnIndex: id.turnIndex,
    sessionNum: id.sessionNum,
    xRequestId: id.xRequestId,
    xCorrelationId: id.xCorrelationId,
    model: id.model,
    scheduledNs: id.scheduledNs,
    startNs: 0,
    sentNs: null,
    connectionReused: null,
    connectDurationNs: null,
    ackNs: null,
    responseStreamed: null,
    chunks: [],
    streamEndNs: null,
    endNs: 0,
    usage: null,
    finishReason: null,
    inputTokens: id.inputTokens,
    requestedOutputTokens: id.requestedOutputTokens,
    httpStatus: null,
    parseErrors: 0,
    error: null,
    cancelled: false,
  };
  if (id.sessionId !== undefined) raw.sessionId = id.sessionId;
  if (id.requestType !== undefined) raw.requestType = id.requestType;
  if (id.promptLayout !== undefined) raw.promptLayout = id.promptLayout;
  if (id.sentPromptTokens !== undefined) raw.sentPromptTokens = id.sentPromptTokens;
  if (id.serverUrl !== undefined) raw.serverUrl = id.serverUrl;
  if (id.textInputTokens !== undefined) raw.textInputTokens = id.textInputTokens;
  return raw;
}
