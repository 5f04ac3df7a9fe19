/**
 * Session formation of Bailian rows through `parent_chat_id`, one rule for the streamed replay and
 * the whole-file load, both of which pass every row in file order to one {@link ParentLinker}.
 *
 * Rule: a row continues its parent's session (root = the parent's root `chat_id`) when the parent's
 * row was read EARLIER in the file and is stamped no later than the row. On a fixed schedule a later
 * turn cannot be sent before its parent was answered, so a row stamped before its parent, or placed
 * before it in the file, cannot be its follow-up; a streamed replay also cannot wait for a row it has
 * not read. Such a row, and one naming itself or a `chat_id` not among the rows read, starts a session
 * of its own and is counted in {@link SkipCounts.unlinkedRows} with the reason, for the run to warn.
 * This differs from AIPerf, which links a row to its earliest ancestor anywhere in the file.
 *
 * A `chat_id` may repeat. A row with no parent (or one not linked) always starts a session of its
 * own, even when an earlier row has its `chat_id`; a row naming that `chat_id` as parent links to
 * the LATEST earlier row with it. Session ids are the root row's `chat_id`, or `<chat_id>@<line>`
 * for a root whose `chat_id` an earlier row already had. Repeats are counted in
 * {@link SkipCounts.repeatedChatIds}, for the run to warn.
 * Memory: one map entry and two array slots per row read (about 45 bytes; two maps took 75), plus a
 * string per session, plus one map entry per row dropped by an offset window or the max ISL.
 *
 * Tree replay ({@link ParentLinker.placeOf}, the default of a Bailian replay on a fixed schedule): a
 * linked row whose parent has no child yet continues the parent's chain (the parent's session, as in
 * the linear rule); a linked row whose parent already has a child (a regenerated or branched
 * follow-up: a sibling) starts a branch session `<root id>/<chat_id>` of the same tree, whose first
 * request waits for the parent's ({@link BranchStart}). Four more array slots per row (session,
 * depth, child count, line: about 30 bytes).
 */
import type { BranchStart } from './types.js';
import {
  type RepeatedChatIds,
  type SkipCounts,
  type TraceId,
  UNLINKED_ROWS_SHOWN,
  type UnlinkedReason,
  type UnlinkedRow,
  type UnlinkedRows,
} from './types.js';

/** `parent_chat_id` of a root request. */
export const NO_PARENT = -1;

/** The linking fields of one row. */
export interface LinkFields {
  chatId: TraceId;
  /** {@link NO_PARENT} for a root. */
  parentId: TraceId;
  /** Trace ms (any unit, the same for every row). */
  timestampMs: number;
  /** 1-based file line. */
  line: number;
}

/** Where a row goes in a tree replay ({@link ParentLinker.placeOf}). */
export interface RowPlace {
  /** The session the row joins: its parent's chain, a new branch, or its own (a root). */
  sessionId: string;
  /** The tree's root session id. */
  treeId: string;
  /** Depth of the row in its tree: 0 for a root (and an unlinked row), the parent's + 1. */
  depth: number;
  /** Set when the row starts a branch session. */
  branch?: BranchStart;
}

/** Assigns each row, in file order, the root `chat_id` of its session (see the module comment). */
export class ParentLinker {
  /** Index of the latest row of each `chat_id` read. */
  private readonly rowOf = new Map<TraceId, number>();
  /** Session id per row index (the root's `chat_id`, or `<chat_id>@<line>` for a repeated one). */
  private readonly roots: string[] = [];
  /** Timestamp per row index (an array of doubles, stored unboxed: smaller than a second map). */
  private readonly stamps: number[] = [];
  /** Named rows whose parent was not read yet, by that parent: `later_row` once it is read. */
  private readonly awaited = new Map<TraceId, UnlinkedRow[]>();
  /** Why rows of a `chat_id` were dropped before linking: the offset window or the max ISL. */
  private readonly dropped = new Map<TraceId, 'outside_window' | 'over_max_isl'>();

  /** Tree replay: session id per row index. */
  private readonly chains: string[] = [];
  /** Tree replay: depth per row index. */
  private readonly depths: number[] = [];
  /** Tree replay: linked children per row index. */
  private readonly children: number[] = [];
  /** Tree replay: 1-based file line per row index. */
  private readonly lines: number[] = [];

  /** @param skipped where the unlinked rows are counted (`unlinkedRows`, set at the first one). */
  constructor(private readonly skipped: SkipCounts) {}

  /**
   * The id of the session `row` joins in a linear replay: its parent's, or a new one (its own
   * `chat_id`, or `<chat_id>@<line>` when an earlier row had that `chat_id`).
   */
  sessionOf(row: LinkFields): string {
    const { parent, ownId } = this.link(row);
    const root = parent === undefined ? ownId : (this.roots[parent] as string);
    this.push(row, root);
    return root;
  }

  /**
   * Where `row` goes in a tree replay (module comment): its parent's chain when the parent has no
   * child yet, else a new branch session of the parent's tree; a root (or unlinked row) starts a
   * tree of its own. Use one of `sessionOf` and `placeOf` for all the rows of a linker.
   */
  placeOf(row: LinkFields): RowPlace {
    const { parent, ownId } = this.link(row);
    const place =
      parent === undefined ? { sessionId: ownId, treeId: ownId, depth: 0 } : this.childPlace(parent, ownId);
    this.push(row, place.treeId);
    this.chains.push(place.sessionId);
    this.depths.push(place.depth);
    this.children.push(0);
    this.lines.push(row.line);
    return place;
  }

  private childPlace(parent: number, ownId: string): RowPlace {
    const treeId = this.roots[parent] as string;
    const depth = (this.depths[parent] as number) + 1;
    const first = (this.children[parent] as number) === 0;
    this.children[parent] = (this.children[parent] as number) + 1;
    if (first) return { sessionId: this.chains[parent] as string, treeId, depth };
    const branch: BranchStart = {
      parentLine: this.lines[parent] as number,
      parentTimestampMs: this.stamps[parent] as number,
      depth,
    };
    return { sessionId: `${treeId}/${ownId}`, treeId, depth, branch };
  }

  /** The linked parent's row index (undefined: none, counted when named) and the row's own id. */
  private link(row: LinkFields): { parent: number | undefined; ownId: string } {
    const { chatId, parentId } = row;
    if (this.awaited.size > 0) this.parentArrived(chatId);
    const repeated = this.rowOf.has(chatId);
    if (repeated) this.repeatedId(row);
    let linked: number | undefined;
    if (parentId !== NO_PARENT) {
      const parent = parentId === chatId ? undefined : this.rowOf.get(parentId);
      if (parent !== undefined && (this.stamps[parent] as number) <= row.timestampMs) linked = parent;
      else this.unlinked(row, this.reason(row, parent));
    }
    return { parent: linked, ownId: repeated ? `${chatId}@${row.line}` : String(chatId) };
  }

  private push(row: LinkFields, root: string): void {
    this.rowOf.set(row.chatId, this.roots.length);
    this.roots.push(root);
    this.stamps.push(row.timestampMs);
  }

  /** Records a row the offset window dropped, so a row naming it as parent says so. */
  droppedByWindow(chatId: TraceId): void {
    this.dropped.set(chatId, 'outside_window');
  }

  /** Records a row `--synthesis-max-isl` dropped, so a row naming it as parent says so. */
  droppedByMaxIsl(chatId: TraceId): void {
    this.dropped.set(chatId, 'over_max_isl');
  }

  private repeatedId(row: LinkFields): void {
    this.skipped.repeatedChatIds ??= { count: 0, rows: [] };
    const report = this.skipped.repeatedChatIds;
    report.count += 1;
    if (report.rows.length < UNLINKED_ROWS_SHOWN)
      report.rows.push({ line: row.line, chatId: String(row.chatId) });
  }

  private reason(row: LinkFields, parent: number | undefined): UnlinkedReason {
    if (row.parentId === row.chatId) return 'self';
    if (parent !== undefined) return 'later_timestamp';
    return this.dropped.get(row.parentId) ?? 'not_read';
  }

  private unlinked(row: LinkFields, reason: UnlinkedReason): void {
    this.skipped.unlinkedRows ??= { count: 0, rows: [] };
    const report = this.skipped.unlinkedRows;
    report.count += 1;
    if (report.rows.length >= UNLINKED_ROWS_SHOWN) return;
    const named: UnlinkedRow = {
      line: row.line,
      chatId: String(row.chatId),
      parentChatId: String(row.parentId),
      reason,
    };
    report.rows.push(named);
    if (reason !== 'not_read') return;
    const waiting = this.awaited.get(row.parentId);
    if (waiting === undefined) this.awaited.set(row.parentId, [named]);
    else waiting.push(named);
  }

  private parentArrived(chatId: TraceId): void {
    const waiting = this.awaited.get(chatId);
    if (waiting === undefined) return;
    for (const named of waiting) named.reason = 'later_row';
    this.awaited.delete(chatId);
  }
}

/**
 * The warning for rows replayed as sessions of their own although they name a parent, naming the
 * first rows (chat_id, line, why), e.g. `2 rows name a parent_chat_id that is not an earlier row …:
 * chat_id 5 (line 1): its parent 9 comes later in the file; …`.
 */
export function unlinkedRowsWarning(report: UnlinkedRows): string {
  const named = report.rows.map((r) => `chat_id ${r.chatId} (line ${r.line}): ${reasonText(r)}`).join('; ');
  const more = report.count > report.rows.length ? `; and ${report.count - report.rows.length} more` : '';
  const [rows, each] =
    report.count === 1 ? ['1 row names', 'it was'] : [`${report.count} rows name`, 'each was'];
  return `${rows} a parent_chat_id that is not an earlier row stamped no later, so ${each} replayed as a session of its own: ${named}${more}`;
}

/**
 * The warning for rows whose `chat_id` an earlier row already had, naming the first ones, e.g.
 * `1 row repeats the chat_id of an earlier row: …: chat_id 1 (line 2)`.
 */
export function repeatedChatIdsWarning(report: RepeatedChatIds): string {
  const named = report.rows.map((r) => `chat_id ${r.chatId} (line ${r.line})`).join('; ');
  const more = report.count > report.rows.length ? `; and ${report.count - report.rows.length} more` : '';
  const rows = report.count === 1 ? '1 row repeats' : `${report.count} rows repeat`;
  return `${rows} an earlier row's chat_id (a row with parent_chat_id -1 still starts a session of its own; a row naming that chat_id as parent follows the latest earlier row with it): ${named}${more}`;
}

function reasonText(r: UnlinkedRow): string {
  switch (r.reason) {
    case 'later_row':
      return `its parent ${r.parentChatId} comes later in the file`;
    case 'later_timestamp':
      return `its parent ${r.parentChatId} is stamped later`;
    case 'self':
      return 'it names itself as parent';
    case 'outside_window':
      return `its parent ${r.parentChatId} is outside the offset window (--fixed-schedule-start-offset / --fixed-schedule-end-offset)`;
    case 'over_max_isl':
      return `its parent ${r.parentChatId} was dropped by --synthesis-max-isl`;
    case 'not_read':
      return `no row with chat_id ${r.parentChatId} was read`;
  }
}
