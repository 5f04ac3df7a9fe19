/**
 * Writing at once on a kept-alive connection that is known clean.
 *
 * undici 7 (since its fix for GHSA-35p6-xmwp-9g52) never writes a request on a reused idle HTTP/1.1
 * connection in the turn that asked for it: it first waits one `setImmediate`, so that the event
 * loop's next poll phase reads whatever the server may have sent on the idle connection (unexpected
 * bytes — a stray or smuggled response that would otherwise be taken as the answer to the next
 * request — or its close). The wait lasts as long as the poll phase's other I/O: under load, ms
 * (bench/README.md, "Bursty trace replay": p50 2.4, p99 16 ms of `connection_wait`).
 *
 * The protection does not need that wait when the poll phase has already run since the connection
 * went idle: undici reads an idle connection as its bytes arrive (its parser stays attached), and
 * destroys it at once on any byte (`bad response`) or on the server's end or close. So a connection
 * idle since before the latest complete loop turn has had every byte that reached this process
 * before that turn's poll phase checked; one that is still open and not destroyed then is clean as of
 * that poll phase, which is what undici's own wait establishes for the poll phase after the request.
 * The part no check can cover is the same either way: bytes the server sends after the last poll
 * phase (undici's or ours) race the request.
 *
 * How: {@link LoopTurns} counts loop turns (a `setImmediate` chain that runs only while a connection
 * has just gone idle); a connection whose answer completed in turn `t` is known clean from turn
 * `t + 2` on (the check phase of turn `t + 1` follows a poll phase that began after it went idle).
 * undici decides to wait by reading one per-socket flag ("this socket answered while no other request
 * was queued"), an own property of the socket under a module-private symbol, which it sets when an
 * answer completes and reads only when it is about to write on an idle socket.
 * {@link trustCleanIdleSocket} finds that symbol by its description on a socket undici has written on
 * and turns the property into an accessor that keeps undici's value but reads false while the socket
 * is known clean. undici's code is not changed; when a later undici has no such flag (or names it
 * otherwise), nothing is installed and undici waits as before. Sockets are ours (client/connector.ts
 * opens every one), so nothing else sees the accessor.
 */

/** The description of undici 7's per-socket "used while idle" symbol (lib/dispatcher/client-h1.js). */
export const UNDICI_SOCKET_USED = 'kSocketUsed';

/** Counts event-loop turns while some connection waits to be known clean. */
export class LoopTurns {
  /** Turns counted so far (check phases reached by the chain). */
  turn = 0;
  /** The chain runs until {@link LoopTurns.turn} reaches this. */
  private untilTurn = 0;
  private running = false;

  /**
   * A connection went idle now (in the current turn): returns the turn from which it is known clean
   * (two check phases on: the poll phase between them began after now), and counts turns until then.
   */
  idleNow(): number {
    const cleanAt = this.turn + 2;
    if (cleanAt > this.untilTurn) this.untilTurn = cleanAt;
    if (!this.running) {
      this.running = true;
      setImmediate(this.tick);
    }
    return cleanAt;
  }

  private readonly tick = (): void => {
    this.turn++;
    if (this.turn < this.untilTurn) setImmediate(this.tick);
    else this.running = false;
  };
}

/** What the accessor reads of a connection: whether a request is on it and from which turn it is clean. */
export interface IdleState {
  /** A request is on it (written, its answer not complete). */
  busy: boolean;
  /** The {@link LoopTurns} turn from which it is known clean once idle; null before its first answer. */
  cleanAtTurn: number | null;
}

/** undici's per-socket flag symbol, once found on a socket; null when a socket undici wrote on has none. */
let socketUsedKey: symbol | null | undefined;

/** undici's flag symbol on `socket` (a socket undici has taken), or null. */
function findSocketUsedKey(socket: object): symbol | null {
  if (socketUsedKey !== undefined) return socketUsedKey;
  const key = Object.getOwnPropertySymbols(socket).find((s) => s.description === UNDICI_SOCKET_USED);
  socketUsedKey = key ?? null;
  return socketUsedKey;
}

/**
 * Lets undici write at once on `socket` when it is idle and known clean (see the module comment).
 * Call once, after undici has written on the socket (its flag exists from then). Returns false, and
 * changes nothing, when undici keeps no such flag on it.
 */
export function trustCleanIdleSocket(socket: object, state: IdleState, turns: LoopTurns): boolean {
  const key = findSocketUsedKey(socket);
  if (key === null) return false;
  const descriptor = Object.getOwnPropertyDescriptor(socket, key);
  if (descriptor === undefined || !('value' in descriptor) || descriptor.configurable !== true) return false;
  let used = descriptor.value === true;
  Object.defineProperty(socket, key, {
    configurable: true,
    enumerable: descriptor.enumerable === true,
    get: () => used && !isClean(state, turns),
    set: (value: unknown) => {
      used = value === true;
    },
  });
  return true;
}

/** Idle, and idle since before the latest complete loop turn. */
function isClean(state: IdleState, turns: LoopTurns): boolean {
  return !state.busy && state.cleanAtTurn !== null && turns.turn >= state.cleanAtTurn;
}
