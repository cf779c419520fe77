// applyBatch and diff, on answers a live server gives.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { applyBatch, diff, mergePatch, BatchMisfitError, BatchDiffError } from "../batchdiff.js";
import { startServer, send } from "./server.js";

let server;
before(async () => { server = await startServer(); });
after(async () => { await server.stop(); });

/** `value`, frozen to its depth: applying to it must not change it. */
function frozen(value) {
  if (value !== null && typeof value === "object") { Object.values(value).forEach(frozen); Object.freeze(value); }
  return value;
}

/** The `changes` answer from `old` to `neu` written as a feed's two versions. */
async function changes(feed, old, neu, query = "") {
  const first = await send(server.baseURL, "PUT", "/feeds/" + feed, old);
  await send(server.baseURL, "PUT", "/feeds/" + feed, neu);
  return send(server.baseURL, "GET", `/feeds/${feed}/changes?since=${first.version}${query}`);
}

test("applyBatch builds the new list from the old and leaves the old as it was", async () => {
  const old = frozen([{ id: 1, a: 1, b: { c: 1, d: 2 } }, { id: 2 }, { id: 3, a: 3 }, "s"]);
  const neu = [{ id: 3, a: 3 }, { id: 1, a: 2, b: { c: 1 } }, { id: 4 }, "s"];
  for (const query of ["", "&values=merge"]) {
    const answer = await changes("list" + query.length, old, neu, query);
    assert.deepEqual(applyBatch(old, answer), neu);
  }
  assert.equal(old[0].a, 1);
});

test("merge answers say their form; a whole row that reads {merge: …} stays whole", async () => {
  const old = [{ id: 1, merge: { x: 1 } }];
  const neu = [{ id: 1, merge: { x: 2 } }];
  const merge = await changes("form-merge", old, neu, "&values=merge");
  assert.equal(merge.values.form, "merge");
  assert.deepEqual(applyBatch(old, merge), neu);
  const rowsLikeEntries = [{ merge: { x: 1 } }];
  const whole = await changes("form-whole", ["a", { item: 1 }], ["a", { item: 2 }]);
  assert.equal(whole.values.form, undefined);
  assert.deepEqual(applyBatch(["a", { item: 1 }], whole), ["a", { item: 2 }]);
  assert.deepEqual(rowsLikeEntries, [{ merge: { x: 1 } }]);
});

test("sections: moved, inserted, deleted, headers merged without their items", async () => {
  const old = frozen({ sections: [
    { id: "a", title: "A", note: "n", items: [{ id: 1, v: 1 }, { id: 2, v: 2 }] },
    { id: "b", title: "B", items: [{ id: 3, v: 3 }] },
    { id: "c", title: "C", items: [] },
  ] });
  const neu = { sections: [
    { id: "c", title: "C", items: [] },
    { id: "a", title: "A2", items: [{ id: 2, v: 2 }, { id: 1, v: 10 }, { id: 3, v: 3, w: null }] },
    { id: "d", title: "D", items: [{ id: 4 }] },
  ] };
  for (const query of ["", "&values=merge"]) {
    assert.deepEqual(applyBatch(old, await changes("sections" + query.length, old, neu, query)), neu);
  }
});

test("an answer that does not fit is refused, and nothing changes", async () => {
  const answer = await changes("misfit", [1, 2, 3], [1, 3, 4], "&values=merge");
  assert.throws(() => applyBatch([1, 2], answer), BatchMisfitError);
  assert.throws(() => applyBatch({ sections: [] }, answer), BatchMisfitError);
  assert.throws(() => applyBatch([1, 2, 3], { ...answer, rows: { ...answer.rows, deleted: [1, 1] } }), BatchMisfitError);
  assert.throws(() => applyBatch([1, 2, 3], { ...answer, values: { rows: { inserted: [], reloaded: [] } } }), BatchMisfitError);
  assert.throws(() => applyBatch([1, 2, 3], { ...answer, counts: { old: 3, new: 4 } }), BatchMisfitError);
  assert.throws(() => applyBatch([1, 2, 3], [{ op: "remove", path: "/1" }]), BatchMisfitError);
  const reload = await changes("reloaded", [{ id: 1, a: 1 }], [{ id: 1, a: 2 }], "&values=merge");
  assert.throws(() => applyBatch([5], reload), BatchMisfitError, "a merge into a scalar");
});

test("a reload past maxChanges is its data", async () => {
  const answer = await changes("reload", [1, 2, 3], [4, 5, 6], "&maxChanges=1");
  assert.equal(answer.reload, true);
  assert.deepEqual(applyBatch([1, 2, 3], answer), [4, 5, 6]);
});

test("mergePatch is RFC 7396's, and takes __proto__ as a member", () => {
  assert.deepEqual(mergePatch({ a: "b", c: { d: "e", f: "g" } }, { a: "z", c: { f: null } }), { a: "z", c: { d: "e" } });
  assert.deepEqual(mergePatch({ a: [{ b: "c" }] }, { a: [1] }), { a: [1] });
  assert.deepEqual(mergePatch("x", { a: 1 }), { a: 1 });
  const merged = mergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}'));
  assert.equal(Object.getPrototypeOf(merged), Object.prototype);
  assert.deepEqual(Object.keys(merged), ["__proto__"]);
  assert.equal({}.polluted, undefined);
});

test("diff answers POST /diff, and a problem is a BatchDiffError", async () => {
  const batch = await diff(server.baseURL, ["a", "b"], ["b", "c"]);
  assert.deepEqual(batch.rows.deleted, [0]);
  assert.deepEqual(batch.rows.inserted, [1]);
  const steps = await diff(server.baseURL + "/", [1], [2], { format: "steps" });
  assert.ok(Array.isArray(steps.steps));
  await assert.rejects(diff(server.baseURL, [1], [2], { nonsense: true }), (e) => e instanceof BatchDiffError && e.status === 400 && e.code === "invalid_option");
});
