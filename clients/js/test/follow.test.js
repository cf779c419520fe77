// followFeed against a live server: random histories, windows, a 410, tokens, errors.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { followFeed, sameJSON, BatchMisfitError } from "../batchdiff.js";
import { startServer, send, seeded, updates } from "./server.js";

let server;
before(async () => { server = await startServer(["--max-versions", "3", "--read-token", "reader", "--write-token", "writer"]); });
after(async () => { await server.stop(); });

const put = (feed, data) => send(server.baseURL, "PUT", "/feeds/" + feed, data, "writer");
const get = (route) => send(server.baseURL, "GET", route, undefined, "reader");
const getToken = async () => "reader";

/** A row of ten members: `step` changes some, adds, removes, nulls or nests others, or
 * turns the row into a scalar that keeps its identity. */
function row(id, step, random) {
  if (step > 0 && random() < 0.03) return `r${id}`;
  const value = { id: `r${id}` };
  for (let member = 0; member < 9; member++) value["m" + member] = `value ${member} of ${id}`;
  if (random() < 0.3) value["m" + Math.floor(random() * 9)] = step;
  const pick = random();
  if (pick < 0.08) value.m8 = null;
  else if (pick < 0.16) delete value.m7;
  else if (pick < 0.24) value.nested = { x: step, y: { deep: step % 3 } };
  else if (pick < 0.3) value.extra = [1, null, step];
  return value;
}

/** Version `step` of a list: rows come and go and sometimes move. */
function list(ids, step, random) {
  let next = ids.filter(() => random() > 0.05);
  while (next.length < 40) next.splice(Math.floor(random() * (next.length + 1)), 0, ids.length + step * 100 + next.length);
  if (random() < 0.5 && next.length > 2) next.push(next.splice(Math.floor(random() * next.length), 1)[0]);
  return next;
}

test("followers through a random history hold what GET answers, merge and whole alike", async () => {
  const random = seeded(41);
  let ids = Array.from({ length: 40 }, (_, i) => i);
  await put("history", ids.map((id) => row(id, 0, random)));
  const merged = updates(), whole = updates();
  const forms = { merge: 0, whole: 0, mergeEntries: 0, itemEntries: 0 };
  const count = (update) => {
    if (!update.answer) return;
    forms[update.answer.values?.form === "merge" ? "merge" : "whole"] += 1;
    for (const entry of update.answer.values.rows.reloaded) if (update.answer.values.form === "merge") forms["merge" in entry ? "mergeEntries" : "itemEntries"] += 1;
  };
  const errors = [];
  const followers = [
    followFeed(server.baseURL, "history", { getToken, wait: 5, onUpdate: (u) => { count(u); merged.onUpdate(u); }, onError: (e) => errors.push(e) }),
    followFeed(server.baseURL, "history", { getToken, wait: 5, values: "whole", onUpdate: (u) => { count(u); whole.onUpdate(u); }, onError: (e) => errors.push(e) }),
  ];
  try {
    for (let step = 1; step <= 25; step++) {
      ids = list(ids, step, random);
      const written = await put("history", ids.map((id) => row(id, step, random)));
      const latest = await get("/feeds/history");
      for (const told of [merged, whole]) {
        const update = await told.next((u) => u.version === written.version);
        assert.ok(sameJSON(update.rows, latest.data), `version ${written.version} as held differs from GET`);
      }
    }
  } finally {
    followers.forEach((f) => f.stop());
  }
  assert.ok(forms.merge >= 20 && forms.whole >= 20 && forms.mergeEntries >= 100 && forms.itemEntries >= 10, JSON.stringify(forms));
  assert.deepEqual(errors, []);
});

test("a sectioned feed's headers and rows merge into what is held", async () => {
  const random = seeded(7);
  const sections = (step) => ({
    sections: ["a", "b", "c", "d"].filter((id) => step === 0 || id !== "bcd"[step % 3]).map((id, s) => ({
      id, title: `${id} at ${random() < 0.5 ? step : 0}`, ...(random() < 0.3 ? { note: null } : {}),
      items: Array.from({ length: 5 + (step + s) % 3 }, (_, r) => row(s * 10 + r, step, random)),
    })),
  });
  await put("sectioned", sections(0));
  const told = updates();
  const follower = followFeed(server.baseURL, "sectioned", { getToken, wait: 5, onUpdate: told.onUpdate, onError: (e) => assert.fail(e) });
  try {
    for (let step = 1; step <= 15; step++) {
      const written = await put("sectioned", sections(step));
      const update = await told.next((u) => u.version === written.version);
      assert.ok(sameJSON(update.rows, (await get("/feeds/sectioned")).data), `version ${written.version}`);
    }
  } finally {
    follower.stop();
  }
});

test("a window, by offset or after a row, is followed as GET pages it", async () => {
  const random = seeded(3);
  let ids = Array.from({ length: 40 }, (_, i) => i);
  await put("windowed", ids.map((id) => row(id, 0, random)));
  const byOffset = updates(), byAnchor = updates();
  const checked = { offset: 0, anchored: 0 };
  const anchor = "r1000";  // a row that stays first: the anchored window follows the rows after it
  const withAnchor = (rows) => [{ id: anchor, title: "pinned" }, ...rows];
  await put("anchored", withAnchor(ids.map((id) => row(id, 0, random))));
  const followers = [
    followFeed(server.baseURL, "windowed", { getToken, wait: 5, offset: 5, limit: 10, onUpdate: byOffset.onUpdate, onError: (e) => assert.fail(e) }),
    followFeed(server.baseURL, "anchored", { getToken, wait: 5, after: anchor, limit: 10, onUpdate: byAnchor.onUpdate, onError: (e) => assert.fail(e) }),
  ];
  try {
    const first = await byOffset.next(() => true);
    assert.equal(first.answer, null);
    assert.equal(first.total, 40);
    for (let step = 1; step <= 12; step++) {
      ids = list(ids, step, random);
      const rows = ids.map((id) => row(id, step, random));
      const written = await put("windowed", rows);
      const anchored = await put("anchored", withAnchor(rows));
      const page = await get("/feeds/windowed?offset=5&limit=10");
      const held = await byOffset.next((u) => u.version >= written.version, 8_000).catch(() => null);
      // A version that leaves the window as it was tells nothing: the window still matches.
      if (held) { assert.ok(sameJSON(held.rows, page.data), `offset window at ${written.version}`); checked.offset += 1; }
      const anchoredPage = await get(`/feeds/anchored?after=${anchor}&limit=10`);
      const heldAnchored = await byAnchor.next((u) => u.version >= anchored.version, 8_000).catch(() => null);
      if (heldAnchored) { assert.ok(sameJSON(heldAnchored.rows, anchoredPage.data), `anchored window at ${anchored.version}`); checked.anchored += 1; }
    }
  } finally {
    followers.forEach((f) => f.stop());
  }
  assert.ok(checked.offset >= 8 && checked.anchored >= 8, JSON.stringify(checked));
});

test("a window whose anchor row goes stays where it stood, by its offset", async () => {
  const rows = (ids) => ids.map((id) => ({ id, name: `row ${id}` }));
  await put("anchor-gone", rows([1, 2, 3, 4, 5, 6]));
  const told = updates();
  const errors = [];
  const follower = followFeed(server.baseURL, "anchor-gone", { getToken, wait: 5, after: 2, limit: 2, onUpdate: told.onUpdate, onError: (e) => errors.push(e) });
  try {
    const first = await told.next(() => true);
    assert.deepEqual(first.rows, rows([3, 4]));
    assert.equal(first.offset, 2);
    const written = await put("anchor-gone", rows([1, 3, 4, 5, 6, 7]));
    const update = await told.next((u) => u.version === written.version);
    assert.equal(update.answer, null);
    assert.deepEqual(update.rows, rows([4, 5]), "the rows at the offset the window stood at");
    assert.deepEqual(errors.map((e) => e.code), ["cursor_gone"]);
    const next = await put("anchor-gone", rows([1, 3, 4, 9, 6, 7]));
    assert.deepEqual((await told.next((u) => u.version === next.version)).rows, rows([4, 9]));
  } finally {
    follower.stop();
  }
});

test("since: 0 starts from the empty collection: the first answer inserts every row", async () => {
  const written = await put("from-nothing", { sections: [{ id: "s", items: [{ id: 1 }, { id: 2 }] }] });
  const told = updates();
  const follower = followFeed(server.baseURL, "from-nothing", { since: 0, getToken, wait: 5, onUpdate: told.onUpdate, onError: (e) => assert.fail(e) });
  try {
    const first = await told.next(() => true);
    assert.equal(first.version, written.version);
    assert.deepEqual(first.answer.sections.inserted, [0]);
    assert.deepEqual(first.rows, (await get("/feeds/from-nothing")).data);
  } finally {
    follower.stop();
  }
  assert.throws(() => followFeed(server.baseURL, "from-nothing", { since: 5 }), TypeError);
});

test("a follower past retention recovers: it reads the latest and diffs it against what it holds", async () => {
  const first = await put("behind", [{ id: 1, t: "one" }, { id: 2, t: "two" }]);
  const held = (await get("/feeds/behind")).data;
  for (let v = 0; v < 4; v++) await put("behind", [{ id: 2, t: `two ${v}` }, { id: 3, t: "three" }]);  // --max-versions 3: the first is gone
  const told = updates();
  const errors = [];
  const follower = followFeed(server.baseURL, "behind", { since: first.version, rows: held, getToken, wait: 5, onUpdate: told.onUpdate, onError: (e) => errors.push(e) });
  try {
    const update = await told.next(() => true);
    assert.equal(update.answer, null);
    assert.deepEqual(update.rows, [{ id: 2, t: "two 3" }, { id: 3, t: "three" }]);
    assert.deepEqual(update.batch.rows.deleted, [0]);
    assert.deepEqual(update.batch.rows.reloaded, [1]);
    assert.deepEqual(errors, [], "a 410 is recovered, not an error");
    const next = await put("behind", [{ id: 2, t: "two" }]);
    assert.deepEqual((await told.next((u) => u.version === next.version)).rows, [{ id: 2, t: "two" }]);
  } finally {
    follower.stop();
  }
});

test("getToken is asked before every request; failures are told and retried", async () => {
  let asked = 0;
  const errors = [];
  const told = updates();
  // No token at first: 401s, told to onError, retried with backoff until a token comes.
  const follower = followFeed(server.baseURL, "later", {
    wait: 1, getToken: async () => (++asked > 1 ? "reader" : undefined), onUpdate: told.onUpdate, onError: (e) => errors.push(e),
  });
  try {
    const written = await put("later", ["x"]);
    const update = await told.next((u) => u.version === written.version);
    assert.deepEqual(update.rows, ["x"]);
    assert.equal(errors[0].status, 401);
    assert.ok(errors.every((e) => e.status === 401 || e.status === 404), errors.map(String).join("; "));
    const before = asked;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.ok(asked >= before + 2, `asked ${asked - before} times in 2.5 s of 1 s long polls`);
  } finally {
    follower.stop();
  }
});

/** Runs `body` with `fetch` going through `through(url, response)` for the requests `matches` picks. */
async function withFetch(matches, through, body) {
  const real = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    const response = await real(url, init);
    return matches(String(url)) ? through(String(url), response) : response;
  };
  try { return await body(); } finally { globalThis.fetch = real; }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test("answers that never fit are told and retried with a growing wait, not in a loop", async () => {
  await put("misfits", [1, 2, 3]);
  let asked = 0;
  const errors = [];
  await withFetch((url) => url.includes("/feeds/misfits"), async (url, response) => {
    asked += 1;
    if (!url.includes("/changes")) return response;
    const answer = await response.json();
    answer.counts.old += 1;  // what a server holding another history would answer
    return new Response(JSON.stringify(answer), { status: 200, headers: { "Content-Type": "application/json" } });
  }, async () => {
    const follower = followFeed(server.baseURL, "misfits", { getToken, wait: 1, onError: (e) => errors.push(e) });
    await sleep(2_500);
    follower.stop();
  });
  await put("misfits", [1, 2, 3, 4]);
  assert.ok(errors.length >= 2 && errors.every((e) => e instanceof BatchMisfitError), errors.map(String).join("; "));
  assert.ok(asked <= 14, `${asked} requests in 2.5 s`);
});

test("an answer from another version than the one held does not fit", async () => {
  const first = await put("elsewhere", [1]);
  const errors = [];
  await withFetch((url) => url.includes("/feeds/elsewhere/changes"), async (url, response) => {
    const answer = await response.json();
    answer.from -= 1;
    return new Response(JSON.stringify(answer), { status: 200, headers: { "Content-Type": "application/json" } });
  }, async () => {
    const follower = followFeed(server.baseURL, "elsewhere", { since: first.version, rows: [1], getToken, wait: 0, onError: (e) => errors.push(e) });
    await sleep(600);
    follower.stop();
  });
  assert.ok(errors.length >= 1 && errors[0] instanceof BatchMisfitError, errors.map(String).join("; "));
});

test("without a wait, answers that bring nothing are followed by a pause", async () => {
  await put("quiet", [1]);
  let polls = 0;
  await withFetch((url) => url.includes("/feeds/quiet/changes"), (url, response) => { polls += 1; return response; }, async () => {
    const follower = followFeed(server.baseURL, "quiet", { getToken, wait: 0, onError: (e) => assert.fail(e) });
    await sleep(2_000);
    follower.stop();
  });
  assert.ok(polls >= 2 && polls <= 6, `${polls} polls in 2 s`);
});

test("a Retry-After is waited out; an anchor that is not a string goes as JSON", async () => {
  await put("rows-as-identities", [{ name: "w" }, { name: "x" }, { name: "y" }]);
  let refused = 0, times = [];
  const told = updates();
  await withFetch((url) => url.includes("/feeds/rows-as-identities"), (url, response) => {
    times.push(Date.now());
    if (refused++ > 0) return response;
    return new Response("{}", { status: 503, headers: { "Retry-After": "1" } });
  }, async () => {
    const follower = followFeed(server.baseURL, "rows-as-identities", { getToken, wait: 1, after: { name: "x" }, limit: 1, onUpdate: told.onUpdate });
    const first = await told.next(() => true);
    follower.stop();
    assert.deepEqual(first.rows, [{ name: "y" }]);
  });
  assert.ok(times[1] - times[0] >= 900, `tried again after ${times[1] - times[0]} ms`);
});

test("long polls ask with the cursor the last answer named", async () => {
  await put("cursored", [1]);
  const asked = [];
  await withFetch((url) => url.includes("/feeds/cursored/changes"), (url, response) => {
    asked.push({ url, cursor: response.headers.get("BatchDiff-Cursor") });
    return response;
  }, async () => {
    const follower = followFeed(server.baseURL, "cursored", { getToken, wait: 1, onError: (e) => assert.fail(e) });
    await sleep(2_600);
    follower.stop();
  });
  assert.ok(asked.length >= 2, JSON.stringify(asked));
  assert.match(asked[0].url, /[?&]cursor=0(&|$)/);
  for (let i = 1; i < asked.length; i++) {
    assert.ok(asked[i - 1].cursor !== null, "every long poll's answer names a cursor");
    assert.match(asked[i].url, new RegExp(`[?&]cursor=${asked[i - 1].cursor}(&|$)`));
  }
});
