// Types of batchdiff.js, BatchDiff's client (docs/clients.md).

/** Any JSON value. */
export type JSONValue = null | boolean | number | string | JSONValue[] | { [member: string]: JSONValue };

/** A list's rows, or sections each with its `items` (docs/batch-format.md §1.1). */
export type Collection = JSONValue[] | { sections: Array<{ items: JSONValue[]; [member: string]: JSONValue }>; [member: string]: JSONValue };

/** A row path: an index in a list, `[section, row]` in a sectioned collection. */
export type RowPath = number | [number, number];

/** A batch (docs/batch-format.md §2). */
export interface Batch {
  rows?: { deleted?: RowPath[]; inserted?: RowPath[]; reloaded?: RowPath[]; moved?: Array<{ from: RowPath; to: RowPath }>; changedMembers?: Array<string[] | null> };
  sections?: { deleted?: number[]; inserted?: number[]; updated?: number[]; moved?: Array<{ from: number; to: number }>; changedMembers?: Array<string[] | null> };
  counts: { old: number | number[]; new: number | number[] };
}

/** A merge entry of `values=merge` (docs/batch-format.md §6). */
export type MergeEntry = { merge: JSONValue } | { item: JSONValue };

/** A feed's `changes` answer in the batch format (docs/feeds.md §5.2), or its reload. */
export interface ChangesAnswer extends Partial<Batch> {
  feed: string;
  from: number;
  to: number;
  /** With `values=merge`, `form` is "merge" and reloaded rows and updated headers are MergeEntry. */
  values?: {
    form?: "merge";
    rows: { inserted: JSONValue[]; reloaded: JSONValue[] };
    sections?: { inserted: JSONValue[]; updated: JSONValue[] };
  };
  /** A window's answer: where it starts, and the collection's rows (sections) old and new. */
  offset?: number;
  total?: { old: number; new: number };
  /** Past `maxChanges`: the latest collection (or window) whole in `data`. */
  reload?: true;
  data?: Collection;
}

/** Options of `POST /diff` (docs/batch-format.md §6, §7). */
export interface DiffOptions {
  idKey?: string;
  orderBy?: string;
  format?: "batch" | "steps" | "json-patch";
  changedMembers?: boolean;
  maxChanges?: number;
  [option: string]: JSONValue | undefined;
}

/** How a request is made: a bearer token asked afresh, and a signal that aborts it. */
export interface RequestOptions {
  getToken?: () => Promise<string | undefined> | string | undefined;
  signal?: AbortSignal;
}

/** A request that failed: the server's problem document (docs/errors.md), or status 0. */
export class BatchDiffError extends Error {
  readonly status: number;
  readonly code: string | null;
  readonly problem: { [member: string]: JSONValue } | null;
  /** When the server said when to try again (`Retry-After`), in milliseconds. */
  readonly retryAfter?: number;
}

/** An answer that does not fit what it is applied to. */
export class BatchMisfitError extends Error {}

/** `POST /diff`: the batch (or `options.format`'s answer) that takes `old` to `neu`. */
export function diff(baseURL: string, old: Collection, neu: Collection, options?: DiffOptions, request?: RequestOptions): Promise<any>;

/** The collection `answer` leads to from `rows` (never changed); throws BatchMisfitError when it does not fit. */
export function applyBatch<C extends Collection>(rows: C, answer: ChangesAnswer): C;

/** RFC 7396: `target` with `patch` merged in, as a new value. */
export function mergePatch(target: JSONValue | undefined, patch: JSONValue): JSONValue;

/** Whether two JSON values are equal, objects whatever their members' order. */
export function sameJSON(a: JSONValue, b: JSONValue): boolean;

/** What a follower tells after each answer that changed what it holds. */
export interface FeedUpdate {
  version: number;
  /** The whole held list or window. */
  rows: Collection;
  /** The `changes` answer applied; null after the first read or a recovery. */
  answer: ChangesAnswer | null;
  /** A window's collection rows (sections) in the latest version, and where it starts. */
  total?: number;
  offset?: number;
  /** After a recovery, the batch from what was held to `rows` (POST /diff), when it could be had. */
  batch: Batch | null;
}

export interface FollowOptions {
  /** The version `rows` are of (0 alone: from the empty collection, by `changes`); without it the follower reads the feed first. */
  since?: number;
  rows?: Collection;
  /** A window: `offset` (or `after`, a row's identity) and `limit` (docs/feeds.md §5.3). */
  offset?: number;
  after?: JSONValue;
  limit?: number;
  /** The long poll's seconds (default 30). */
  wait?: number;
  /** "merge" (default) or "whole". */
  values?: "merge" | "whole";
  /** The identity member, for the diff after a recovery (default "id"). */
  idKey?: string;
  getToken?: () => Promise<string | undefined> | string | undefined;
  onUpdate?: (update: FeedUpdate) => void;
  onError?: (error: Error) => void;
}

/** Follows a feed by long poll until `stop()`. */
export function followFeed(baseURL: string, feedID: string, options?: FollowOptions): { stop(): void };
