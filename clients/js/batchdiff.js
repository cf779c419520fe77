// BatchDiff's client for browsers and Node 20: one ES module, no dependencies.
//
// - diff(baseURL, old, new, options): POST /diff, the answer parsed.
// - applyBatch(rows, answer): the collection a `changes` answer leads to from `rows`.
// - followFeed(baseURL, feedID, options): follows a feed (or a window of it) by long poll.
//
// docs/clients.md tells how to use it; docs/batch-format.md §3 and §6 what it applies.

/** A request that failed: `status` and `code` from the server's problem document
 * (docs/errors.md), or status 0 when no answer came; `retryAfter`, in milliseconds, when the
 * server said when to try again. */
export class BatchDiffError extends Error {
  constructor(message, { status = 0, code = null, problem = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "BatchDiffError";
    this.status = status;
    this.code = code;
    this.problem = problem;
  }
}

/** An answer that does not fit the collection it is applied to (docs/batch-format.md §3). */
export class BatchMisfitError extends Error {
  constructor(message) {
    super("the answer does not fit: " + message);
    this.name = "BatchMisfitError";
  }
}

// ---- HTTP ----

/** `baseURL` (absolute, or "" for the page's own server) joined with `path` and `query`. */
function url(baseURL, path, query = {}) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return String(baseURL).replace(/\/+$/, "") + path + (text ? "?" + text : "");
}

/** The parsed JSON answer of a request; a BatchDiffError for anything but a 2xx. `answered`
 * is told the response first (its headers). */
async function request(target, { method = "GET", body, token, signal, answered } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = "Bearer " + token;
  let response, text;
  try {
    response = await fetch(target, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new BatchDiffError(`${method} ${target}: ${error.message}`, { cause: error });
  }
  if (!response.ok) {
    let problem = null;
    try { problem = JSON.parse(text); } catch { /* not a problem document */ }
    const said = problem && typeof problem === "object" ? problem : null;
    const error = new BatchDiffError(said?.code ? `${response.status} ${said.code}: ${said.detail}` : `${method} ${target}: HTTP ${response.status}`,
      { status: response.status, code: said?.code ?? null, problem: said });
    // The server's Retry-After (a 503, a 429), in milliseconds.
    const retryAfter = Number(response.headers.get("Retry-After"));
    if (response.headers.has("Retry-After") && Number.isFinite(retryAfter) && retryAfter >= 0) error.retryAfter = retryAfter * 1000;
    throw error;
  }
  answered?.(response);
  return JSON.parse(text);
}

/** `getToken`'s token, asked afresh for each request. */
async function tokenFrom(getToken) {
  return getToken ? await getToken() : undefined;
}

/**
 * `POST /diff`: the batch (or `options.format`'s answer) that takes `old` to `neu`.
 * `options` are the body's `options` (idKey, orderBy, format, changedMembers, maxChanges);
 * `getToken` (async) gives a bearer token, `signal` aborts.
 */
export async function diff(baseURL, old, neu, options = {}, { getToken, signal } = {}) {
  return request(url(baseURL, "/diff"), { method: "POST", body: { old, new: neu, options }, token: await tokenFrom(getToken), signal });
}

// ---- JSON values ----

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** Sets `object[name]` as a member of its own, even for `__proto__`. */
function setMember(object, name, value) {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
}

/** RFC 7396: `target` with `patch` merged in, as a new value (`target` is left as it is). */
export function mergePatch(target, patch) {
  if (!isObject(patch)) return patch;
  const result = {};
  if (isObject(target)) for (const [name, value] of Object.entries(target)) setMember(result, name, value);
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    else setMember(result, name, mergePatch(Object.hasOwn(result, name) ? result[name] : undefined, value));
  }
  return result;
}

/** Whether two JSON values are equal: numbers by value, objects whatever their members' order. */
export function sameJSON(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((value, i) => sameJSON(value, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => Object.hasOwn(b, name) && sameJSON(a[name], b[name]));
}

// ---- Applying a batch (docs/batch-format.md §3) ----

function misfit(message) {
  throw new BatchMisfitError(message);
}

/** `value` as an array of what `check` accepts; a missing list is empty (§2.5). */
function list(value, name) {
  if (value === undefined) return [];
  if (!Array.isArray(value)) misfit(`${name} is not an array`);
  return value;
}

function index(value, count, name) {
  if (!Number.isInteger(value) || value < 0 || value >= count) misfit(`${name} ${JSON.stringify(value)} is outside 0..<${count}`);
  return value;
}

/** A new content from a value entry: whole, or with `values.form` "merge" merged into `old`. */
function contentFrom(merging, old, entry, name) {
  if (!merging) return entry;
  if (isObject(entry) && Object.keys(entry).length === 1) {
    if (Object.hasOwn(entry, "merge")) {
      if (!isObject(old)) misfit(`${name} merges into a content that is not an object`);
      return mergePatch(old, entry.merge);
    }
    if (Object.hasOwn(entry, "item")) return entry.item;
  }
  return misfit(`${name} is neither {"merge": …} nor {"item": …}`);
}

/** The old side of a row path: in a kept old section, inside it, named once. */
function oldPath(path, old, deletedSections, name) {
  if (!Array.isArray(path) || path.length !== 2) misfit(`${name} ${JSON.stringify(path)} is not a [section, row] path`);
  const section = index(path[0], old.length, name);
  if (deletedSections.has(section)) misfit(`${name} ${JSON.stringify(path)} is in a deleted section`);
  index(path[1], old[section].items.length, name);
  return path;
}

/**
 * The sections `old` (each `{...header, items}`) become under `batch` with `values`: the
 * fill of docs/batch-format.md §3, every check it names but identities'.
 */
function applySections(old, batch, values, merging) {
  const counts = batch.counts;
  if (!isObject(counts) || !Array.isArray(counts.old) || !Array.isArray(counts.new)) misfit("counts are missing");
  if (counts.old.length !== old.length || counts.old.some((count, s) => count !== old[s].items.length)) {
    misfit(`counts.old ${JSON.stringify(counts.old)} is not what is held`);
  }
  if (counts.new.some((count) => !Number.isInteger(count) || count < 0)) misfit("counts.new is not a list of counts");
  const sectionOps = batch.sections ?? {}, rowOps = batch.rows ?? {};
  const sectionValues = values?.sections ?? {}, rowValues = values?.rows ?? {};
  const aligned = (ops, entries, name) => {
    if (list(entries, "values of " + name).length !== ops.length) misfit(`the values of ${name} are not aligned with it`);
    return entries ?? [];
  };
  const newCount = counts.new.length;

  // Sections: pinned inserts and moves, the rest filled with the kept old ones in order.
  const deletedSections = new Set();
  for (const s of list(sectionOps.deleted, "sections.deleted")) {
    if (deletedSections.has(index(s, old.length, "sections.deleted"))) misfit(`section ${s} is deleted twice`);
    deletedSections.add(s);
  }
  const origin = new Array(newCount);  // {from: s} or {inserted: k}
  const pin = (n, value, name) => {
    if (origin[index(n, newCount, name)] !== undefined) misfit(`new section ${n} is named twice`);
    origin[n] = value;
  };
  const insertedSections = list(sectionOps.inserted, "sections.inserted");
  const insertedSectionValues = aligned(insertedSections, sectionValues.inserted, "sections.inserted");
  insertedSections.forEach((n, k) => pin(n, { inserted: k }, "sections.inserted"));
  const movedAwaySections = new Set();
  for (const move of list(sectionOps.moved, "sections.moved")) {
    const from = index(move?.from, old.length, "sections.moved from");
    if (deletedSections.has(from) || movedAwaySections.has(from)) misfit(`old section ${from} is named twice`);
    movedAwaySections.add(from);
    pin(move.to, { from }, "sections.moved to");
  }
  let next = 0;
  const keptAfter = (s) => {
    while (s < old.length && (deletedSections.has(s) || movedAwaySections.has(s))) s += 1;
    return s;
  };
  for (let n = 0; n < newCount; n++) {
    if (origin[n] !== undefined) continue;
    next = keptAfter(next);
    if (next >= old.length) misfit("the kept sections run out before the new ones are filled");
    origin[n] = { from: next++ };
  }
  if (keptAfter(next) < old.length) misfit("old sections are left over");

  // Rows: pinned per new section, inserts and moves in; reloads by their old paths.
  const key = (path) => path[0] + "," + path[1];
  const pinnedRows = Array.from({ length: newCount }, () => new Map());
  const pinRow = (path, value, name) => {
    if (!Array.isArray(path) || path.length !== 2) misfit(`${name} ${JSON.stringify(path)} is not a [section, row] path`);
    const n = index(path[0], newCount, name);
    if (origin[n].inserted !== undefined) misfit(`${name} ${JSON.stringify(path)} is in an inserted section`);
    const r = index(path[1], counts.new[n], name);
    if (pinnedRows[n].has(r)) misfit(`new row ${JSON.stringify(path)} is named twice`);
    pinnedRows[n].set(r, value);
  };
  const leaving = new Set();  // old rows deleted or moved away
  const takeOld = (path, name) => {
    const at = key(oldPath(path, old, deletedSections, name));
    if (leaving.has(at)) misfit(`old row ${JSON.stringify(path)} is named twice`);
    leaving.add(at);
  };
  for (const path of list(rowOps.deleted, "rows.deleted")) takeOld(path, "rows.deleted");
  const reloads = new Map();
  const reloaded = list(rowOps.reloaded, "rows.reloaded");
  const reloadedValues = aligned(reloaded, rowValues.reloaded, "rows.reloaded");
  reloaded.forEach((path, k) => {
    const at = key(oldPath(path, old, deletedSections, "rows.reloaded"));
    if (leaving.has(at) || reloads.has(at)) misfit(`reloaded row ${JSON.stringify(path)} is also deleted or named twice`);
    reloads.set(at, k);
  });
  for (const move of list(rowOps.moved, "rows.moved")) {
    takeOld(move?.from, "rows.moved from");
    if (reloads.has(key(move.from))) misfit(`row ${JSON.stringify(move.from)} is reloaded and moved`);
    pinRow(move.to, old[move.from[0]].items[move.from[1]], "rows.moved to");
  }
  const insertedRows = list(rowOps.inserted, "rows.inserted");
  const insertedRowValues = aligned(insertedRows, rowValues.inserted, "rows.inserted");
  insertedRows.forEach((path, k) => pinRow(path, insertedRowValues[k], "rows.inserted"));

  // The new sections.
  const sections = origin.map((from, n) => {
    if (from.inserted !== undefined) {
      const section = insertedSectionValues[from.inserted];
      if (!isObject(section) || !Array.isArray(section.items) || section.items.length !== counts.new[n]) {
        misfit(`inserted section ${n} does not hold counts.new[${n}] = ${counts.new[n]} items`);
      }
      return { inserted: section };
    }
    const { items: oldItems, ...header } = old[from.from];
    const items = new Array(counts.new[n]);
    let r = 0;
    for (let position = 0; position < items.length; position++) {
      if (pinnedRows[n].has(position)) { items[position] = pinnedRows[n].get(position); continue; }
      while (r < oldItems.length && leaving.has(from.from + "," + r)) r += 1;
      if (r >= oldItems.length) misfit(`the rows of section ${n} run out before its positions are filled`);
      const k = reloads.get(from.from + "," + r);
      items[position] = k === undefined ? oldItems[r] : contentFrom(merging, oldItems[r], reloadedValues[k], `rows.reloaded[${k}]`);
      r += 1;
    }
    while (r < oldItems.length && leaving.has(from.from + "," + r)) r += 1;
    if (r < oldItems.length) misfit(`rows of old section ${from.from} are left over`);
    return { header, items };
  });

  // Headers: kept, but for those updated.
  const updated = list(sectionOps.updated, "sections.updated");
  const updatedValues = aligned(updated, sectionValues.updated, "sections.updated");
  const updatedOnce = new Set();
  updated.forEach((n, k) => {
    const section = sections[index(n, newCount, "sections.updated")];
    if (origin[n].inserted !== undefined || updatedOnce.has(n)) misfit(`sections.updated names inserted or repeated section ${n}`);
    updatedOnce.add(n);
    const header = contentFrom(merging, section.header, updatedValues[k], `sections.updated[${k}]`);
    if (!isObject(header)) misfit(`the new header of section ${n} is not an object`);
    section.header = header;
  });
  return sections.map((section) => section.inserted ?? { ...section.header, items: section.items });
}

/**
 * The collection a `changes` answer (`format=batch`, whole or merge values, a reload's
 * `data`) leads to from `rows`, the client's version of it: a list's array, or
 * `{sections: [...]}`, whole or the window the answer is of. A new value: `rows` is left as
 * it is (rows that do not change are shared with it). Throws a BatchMisfitError when the
 * answer does not fit `rows`.
 */
export function applyBatch(rows, answer) {
  if (!isObject(answer)) misfit("it is not an object");
  if (answer.reload === true) {
    if (answer.data === undefined) misfit("a reload without data");
    return answer.data;
  }
  if (answer.steps !== undefined) misfit("applyBatch takes format=batch answers, not steps");
  const merging = answer.values?.form === "merge";
  if (Array.isArray(rows)) {
    if (answer.sections !== undefined || Array.isArray(answer.counts?.old)) misfit("a sectioned batch for a list");
    const wrap = (path) => [0, path];
    const ops = answer.rows ?? {};
    const batch = {
      counts: { old: [answer.counts?.old], new: [answer.counts?.new] },
      sections: {},
      rows: {
        deleted: list(ops.deleted, "rows.deleted").map(wrap),
        inserted: list(ops.inserted, "rows.inserted").map(wrap),
        reloaded: list(ops.reloaded, "rows.reloaded").map(wrap),
        moved: list(ops.moved, "rows.moved").map((move) => ({ from: wrap(move?.from), to: wrap(move?.to) })),
      },
    };
    return applySections([{ items: rows }], batch, { rows: answer.values?.rows }, merging)[0].items;
  }
  if (!isObject(rows) || !Array.isArray(rows.sections)) misfit("what is held is neither a list nor {sections: [...]}");
  if (!Array.isArray(answer.counts?.old)) misfit("a list's batch for a sectioned collection");
  if (rows.sections.some((section) => !isObject(section) || !Array.isArray(section.items))) misfit("a held section has no items");
  return { ...rows, sections: applySections(rows.sections, answer, answer.values, merging) };
}

// ---- Following a feed ----

/** Whether a `changes` answer changes nothing: every index list empty. */
function changesNothing(answer) {
  if (answer.reload === true) return false;
  return [answer.rows, answer.sections].every((ops) => !ops || Object.values(ops).every((value) => !Array.isArray(value) || value.length === 0));
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Whether `answer`, which changes nothing, fits `rows`: its counts are theirs, old and new. */
function keepsCounts(rows, answer) {
  const held = Array.isArray(rows) ? rows.length : rows.sections.map((section) => section.items.length);
  const { old, new: neu } = answer.counts ?? {};
  return sameJSON(old, held) && sameJSON(neu, held);
}

/** `after` as a query sends it: a string as it is, any other identity as JSON. */
function anchorText(after) {
  return after === undefined || typeof after === "string" ? after : JSON.stringify(after);
}

/** The wait before retry `attempt` (1, 2, …): 0.5 s doubling to 30 s, ±20 %. */
function backoff(attempt) {
  return Math.min(30_000, 500 * 2 ** Math.min(attempt - 1, 10)) * (0.8 + 0.4 * Math.random());
}

/**
 * Follows feed `feedID` (or the window `offset`/`after` and `limit` of it) by long poll,
 * from what it reads first (or from `rows` held at version `since`; `since: 0` alone starts
 * from the empty collection, the first answer inserting every row): each answer is
 * applied to what it holds and told to `onUpdate({version, rows, answer, total, offset, batch})`.
 *
 * - `values`: "merge" (the default) or "whole"; `wait`: the long poll's seconds (30).
 * - `getToken` (async) is asked before each request; its token goes as a bearer token.
 * - Failures are told to `onError(error)` and retried with backoff (or after the server's
 *   `Retry-After`). A 410 `version_gone`, or an answer that does not fit (told), is
 *   recovered by reading the latest and diffing it against
 *   what is held (`batch`, by `POST /diff` with `idKey`; null when that fails): `answer` is
 *   then null, as after the first read. When a window's anchor row is gone (410
 *   `cursor_gone`, told to `onError`), the window stays where it stood, by its offset, and is
 *   recovered so. A window's updates also tell `total` (the collection's rows) and `offset`.
 *
 * Returns `{stop()}`; after `stop()` nothing more is told.
 */
export function followFeed(baseURL, feedID, options = {}) {
  const { offset, limit, after, wait = 30, values = "merge", idKey = "id", getToken, onUpdate = () => {}, onError = () => {} } = options;
  if (values !== "merge" && values !== "whole") throw new TypeError(`values is "merge" or "whole", not ${JSON.stringify(values)}`);
  if (options.since > 0 && options.rows === undefined) throw new TypeError("since above 0 needs the rows held at that version");
  const controller = new AbortController();
  const signal = controller.signal;
  const feedPath = "/feeds/" + encodeURIComponent(feedID);
  const window = { offset, limit, after };
  // `cursor`: the one the last long poll's answer named (BatchDiff-Cursor, docs/feeds.md §5.4),
  // asked with next, so that followers of a quiet feed ask one URL a cache may answer.
  const held = { version: options.since, rows: options.rows, total: undefined, offset, cursor: 0 };

  const tell = (update) => {
    if (signal.aborted) return;
    try { onUpdate(update); } catch (error) { onError(error); }
  };

  /** The first read, or a recovery: the latest whole (or its window), diffed against what is held. */
  async function read() {
    const page = await request(url(baseURL, feedPath, { ...window, after: anchorText(window.after) }), { token: await tokenFrom(getToken), signal });
    const before = held.rows;
    held.version = page.version;
    held.total = page.total;
    held.offset = page.offset;
    if (before !== undefined && sameJSON(before, page.data)) return;
    held.rows = page.data;
    let batch = null;
    if (before !== undefined && !signal.aborted) {
      try { batch = await diff(baseURL, before, page.data, { idKey }, { getToken, signal }); } catch (error) { if (signal.aborted) return; }
    }
    tell({ version: held.version, rows: held.rows, answer: null, total: held.total, offset: held.offset, batch });
  }

  /** One long poll from the version held. */
  async function poll() {
    const query = {
      since: held.version, wait, cursor: wait > 0 ? held.cursor : undefined, values: values === "merge" ? "merge" : undefined,
      ...window, after: anchorText(window.after),
    };
    const answered = (response) => {
      const cursor = Number(response.headers.get("BatchDiff-Cursor"));
      if (response.headers.has("BatchDiff-Cursor") && Number.isSafeInteger(cursor) && cursor >= 0) held.cursor = cursor;
    };
    const answer = await request(url(baseURL, feedPath + "/changes", query), { token: await tokenFrom(getToken), signal, answered });
    if (answer.from !== held.version) throw new BatchMisfitError(`an answer from version ${answer.from}, not ${held.version}`);
    // From version 0 without rows, what is held is the empty collection of the answer's shape.
    const rows = held.rows ?? (Array.isArray(answer.counts?.old) ? { sections: [] } : []);
    const changed = held.rows === undefined || !changesNothing(answer);
    if (!changed && !keepsCounts(rows, answer)) throw new BatchMisfitError("an empty batch whose counts are not what is held");
    const next = changed ? applyBatch(rows, answer) : rows;
    held.rows = next;
    held.version = answer.to;
    if (answer.total !== undefined) held.total = answer.total.new;
    if (answer.offset !== undefined) held.offset = answer.offset;
    if (changed) tell({ version: held.version, rows: next, answer, total: held.total, offset: held.offset, batch: null });
    // Without a wait, an answer that brings nothing is followed by a pause, not at once.
    else if (wait === 0) await pause(500, signal);
  }

  (async () => {
    // Failures in a row; a read that recovers does not end a run of them, a poll that fits does.
    let failures = 0, recover = held.version === undefined;
    while (!signal.aborted) {
      try {
        if (recover) {
          await read();
          recover = false;
        } else {
          await poll();
          failures = 0;
        }
      } catch (error) {
        if (signal.aborted) return;
        failures += 1;
        const gone = error instanceof BatchDiffError && error.status === 410;
        if (gone && error.code === "cursor_gone" && window.after !== undefined) {
          // The anchor row is gone: the window stays where it stood, by its offset, read again.
          window.after = undefined;
          window.offset = held.offset ?? 0;
        }
        // A version no longer retained is no failure to tell; the rest are, a misfit too.
        if (!(gone && error.code === "version_gone")) onError(error);
        const recovers = gone || error instanceof BatchMisfitError;
        const fresh = recovers && !recover && failures === 1;
        if (recovers) recover = true;
        // A recovery after answers that fit is at once; any other failure waits, longer each time.
        if (!fresh) await pause(error.retryAfter ?? backoff(failures), signal);
      }
    }
  })();
  return { stop: () => controller.abort() };
}
