// A batchdiff server for the tests, on loopback: the binary in $BATCHDIFF, else the debug build.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const binary = process.env.BATCHDIFF ? path.resolve(process.env.BATCHDIFF) : path.join(root, ".build/debug/batchdiff");

/** Starts `batchdiff serve` with `flags` on a free port: `{baseURL, stop()}`. */
export async function startServer(flags = []) {
  const child = spawn(binary, ["serve", "--host", "127.0.0.1", "--port", "0", ...flags], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  const baseURL = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the server did not listen:\n" + log)), 20_000);
    const read = (chunk) => {
      log += chunk;
      const found = /batchdiff listening on (http:\/\/\S+)/.exec(log);
      if (found) { clearTimeout(timer); resolve(found[1]); }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`the server exited (${code}):\n${log}`)); });
  });
  return {
    baseURL,
    stop: () => new Promise((resolve) => { child.once("exit", resolve); child.kill("SIGTERM"); }),
  };
}

/** A request to the server as a backend makes it: the parsed answer, or a thrown Error. */
export async function send(baseURL, method, route, body, token) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  const response = await fetch(baseURL + route, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** A seeded generator of numbers in 0..<1 (mulberry32): histories repeat run to run. */
export function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The updates `followFeed` tells, awaited one by one: `next(predicate)` resolves with the
 * first update told (or told later) that `predicate` accepts. */
export function updates() {
  const told = [];
  let waiting = null;
  return {
    onUpdate(update) {
      if (waiting && waiting.predicate(update)) { waiting.resolve(update); waiting = null; } else told.push(update);
    },
    next(predicate, timeout = 15_000) {
      const found = told.find(predicate);
      if (found) { told.splice(0, told.indexOf(found) + 1); return Promise.resolve(found); }
      told.length = 0;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no such update in time")), timeout);
        waiting = { predicate, resolve: (update) => { clearTimeout(timer); resolve(update); } };
      });
    },
  };
}
