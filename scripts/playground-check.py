#!/usr/bin/env python3
"""The playground (GET /) in headless Chromium, on loopback.

Starts a server, opens the page in Debian's `chromium` (as root: --no-sandbox), driven
over the DevTools protocol on a pipe (--remote-debugging-pipe: no port, no extra
package), and checks:
  1. the page loads with no console error, no uncaught exception, and no request to any
     host but the server;
  2. it preloads the companies example, and the batch, steps and patch it shows are the
     server's answers to POST /diff of its two collections (asked here, apart from the page);
     so are the leaderboard example's (examples/leaderboard.json), asked with its orderBy,
     and its table ends in that order;
  3. the live tab follows a feed with the JavaScript client (/batchdiff.js, long polls with
     merge values): PUTs made here show in the page's list, a changed row as a merge patch.
  4. README.md's browser page, served from another origin, follows a feed through CORS.
With PLAYGROUND_SCREENSHOT=<file.png> it saves a screenshot of the diff tab (README).

Usage: scripts/playground-check.py <batchdiff binary>
"""
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
import urllib.request

TIMEOUT = 30


def fail(message):
    print(f"playground-check: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def start_server(binary, flags):
    log = tempfile.NamedTemporaryFile(prefix="playground-server-", suffix=".log", delete=False)
    server = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", "0", "--event-heartbeat", "2", *flags],
                              stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        with open(log.name) as text:
            found = re.search(r"batchdiff listening on (http://\S+)", text.read())
        if found:
            return server, found.group(1)
        if server.poll() is not None:
            fail("the server exited before listening")
        time.sleep(0.1)
    server.kill()
    fail("the server did not listen")


def request(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as response:
        return json.loads(response.read())


class Browser:
    """Chromium speaking the DevTools protocol over fds 3 (commands) and 4 (answers)."""

    def __init__(self, profile):
        commands_read, self.commands = os.pipe()
        self.answers, answers_write = os.pipe()

        def pipes():
            # Through fds above 4 first: either end may be 3 or 4 already.
            commands, answers = os.dup(commands_read) + 100, os.dup(answers_write) + 100
            os.dup2(commands_read, commands)
            os.dup2(answers_write, answers)
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self.process = subprocess.Popen(
            ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", "--window-size=1400,1000", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
            pass_fds=(3, 4), preexec_fn=pipes,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_read)
        os.close(answers_write)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            for answer in self.read(deadline - time.time()):
                if answer.get("id") == self.next_id:
                    if "error" in answer:
                        fail(f"{method}: {answer['error']}")
                    return answer.get("result", {})
        fail(f"no answer to {method}")

    def read(self, timeout):
        """Messages that arrive within `timeout`; events are kept in self.events."""
        ready, _, _ = select.select([self.answers], [], [], max(0, timeout))
        if not ready:
            return []
        chunk = os.read(self.answers, 1 << 20)
        if not chunk:
            fail("chromium closed its pipe")
        self.buffer += chunk
        *messages, self.buffer = self.buffer.split(b"\0")
        parsed = [json.loads(m) for m in messages if m]
        self.events += [m for m in parsed if "method" in m]
        return parsed

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            fail(f"evaluating {expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, what):
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            if self.evaluate(expression):
                return
            self.read(0.2)
        fail(f"waited {TIMEOUT} s for {what}")

    def close(self):
        self.process.kill()
        self.process.wait()


def readme_page():
    """The ```html block of README.md after `<!-- playground-check: the browser page -->`."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")) as readme:
        found = re.search(r"<!-- playground-check: the browser page -->\n```html\n(.*?)\n```", readme.read(), re.S)
    if not found:
        fail("README.md has no browser page after its playground-check marker")
    return found.group(1)


class PageServer:
    """Serves README.md's page as /team.html from another origin (a port of its own), as a
    web app's own server would; the page's server URL is set to the one under test."""

    def __init__(self, page):
        import http.server
        import threading
        self.page = page
        check = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = check.page.encode()
                self.send_response(200 if self.path == "/team.html" else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def follow(self, server_origin):
        """Points the page at the server under test (it names http://localhost:8080)."""
        self.page = self.page.replace("http://localhost:8080", server_origin)


def check_readme_page(browser, origin, pages):
    """README.md's page follows feed `team` from its own origin, through CORS."""
    pages.follow(origin)
    request("PUT", origin + "/feeds/team", [{"id": 1, "name": "Ann"}, {"id": 2, "name": "Bob"}])
    browser.send("Page.navigate", {"url": pages.origin + "/team.html"})
    browser.wait_for("[...document.querySelectorAll('#rows li')].map(li => li.textContent).join() === 'Ann,Bob'", "README's page to show the feed")
    version = request("PUT", origin + "/feeds/team", [{"id": 3, "name": "Cy"}, {"id": 1, "name": "Ann B."}])["version"]
    browser.wait_for(f"document.getElementById('status').textContent === 'version {version}' && "
                     "[...document.querySelectorAll('#rows li')].map(li => li.textContent).join() === 'Cy,Ann B.'", "README's page to follow a PUT")


def main():
    if len(sys.argv) != 2:
        fail("usage: playground-check.py <batchdiff binary>")
    pages = PageServer(readme_page())
    server, url = start_server(sys.argv[1], ["--cors-origin", pages.origin])
    origin = url.rstrip("/")
    profile = tempfile.mkdtemp(prefix="playground-chromium-")
    browser = None
    try:
        browser = Browser(profile)
        target = browser.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        browser.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        for domain in ("Network", "Runtime", "Log", "Page"):
            browser.send(f"{domain}.enable")
        browser.send("Page.navigate", {"url": origin + "/"})
        browser.wait_for("document.readyState === 'complete' && document.getElementById('patch')?.textContent.length > 0",
                         "the page to show its first diff")

        # 2. The example and the server's own answers to it.
        old = json.loads(browser.evaluate("document.getElementById('old').value"))
        new = json.loads(browser.evaluate("document.getElementById('new').value"))
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "companies.json")) as example:
            companies = json.load(example)
        if old != companies["old"] or new != companies["new"]:
            fail(f"the page does not preload examples/companies.json: {old}, {new}")
        for panel, options in (("batch", {}), ("steps", {"format": "steps"}), ("patch", {"format": "json-patch"})):
            shown = json.loads(browser.evaluate(f"document.getElementById('{panel}').textContent"))
            expected = request("POST", origin + "/diff", {"old": old, "new": new, "options": {"idKey": "id", **options}})
            if shown != expected:
                fail(f"the {panel} shown is not the server's answer:\n{shown}\n!=\n{expected}")
        batch = json.loads(browser.evaluate("document.getElementById('batch').textContent"))
        if batch["sections"]["deleted"] != [2] or batch["sections"]["inserted"] != [3]:
            fail(f"the example's batch is not the one docs/batch-format.md shows: {batch}")
        browser.wait_for("document.querySelectorAll('#table li').length === 18 && !document.querySelector('#table li.deleting')",
                         "the table to animate to the new collection (4 headers, 14 items)")
        screenshot = os.environ.get("PLAYGROUND_SCREENSHOT")
        if screenshot:
            browser.send("Runtime.evaluate", {"expression": "document.getElementById('replay').click()", "awaitPromise": False})
            time.sleep(1.3)  # mid-animation: rows sliding in, travelling and flashing
            image = browser.send("Page.captureScreenshot", {"format": "png"})["data"]
            import base64
            with open(screenshot, "wb") as out:
                out.write(base64.b64decode(image))
            print(f"playground-check: screenshot in {screenshot}")

        # The leaderboard: two unsorted lists put in the board's order (options.orderBy) before the diff.
        browser.evaluate("document.getElementById('example').value = 'leaderboard';"
                         "document.getElementById('example').dispatchEvent(new Event('change')); true")
        browser.wait_for("document.getElementById('orderBy').value === '-score,id' && "
                         "(() => { try { return JSON.parse(document.getElementById('batch').textContent).rows.deleted.join() === '2,3' } catch { return false } })()", "the leaderboard's diff")
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "leaderboard.json")) as example:
            board = json.load(example)
        old = json.loads(browser.evaluate("document.getElementById('old').value"))
        new = json.loads(browser.evaluate("document.getElementById('new').value"))
        if old != board["old"] or new != board["new"]:
            fail(f"the page does not show examples/leaderboard.json: {old}, {new}")
        for panel, options in (("batch", {}), ("steps", {"format": "steps"}), ("patch", {"format": "json-patch"})):
            shown = json.loads(browser.evaluate(f"document.getElementById('{panel}').textContent"))
            expected = request("POST", origin + "/diff", {"old": old, "new": new, "options": {"idKey": "id", "orderBy": board["orderBy"], **options}})
            if shown != expected:
                fail(f"the leaderboard's {panel} shown is not the server's answer:\n{shown}\n!=\n{expected}")
        batch = json.loads(browser.evaluate("document.getElementById('batch').textContent"))
        if request("POST", origin + "/diff", {"old": old, "new": new, "options": {"idKey": "id"}}) == batch:
            fail("the leaderboard's batch is the same without orderBy: the example shows nothing of the order")
        rows = batch["rows"]
        if (rows["deleted"], rows["inserted"], rows["reloaded"]) != ([2, 3], [0, 3], [0]):
            fail(f"the leaderboard's batch is not Dee to the top, Bob out, Eve in, Cy reloaded: {rows}")
        ranked = ",".join(f"{p['name']} · {p['score']}" for p in sorted(new, key=lambda p: (-p["score"], p["id"])))
        browser.wait_for(f"""[...document.querySelectorAll('#table li')].map(li => li.textContent).join() === {json.dumps(ranked)}
                            && !document.querySelector('#table li.deleting')""",
                         f"the table to show the board in its new order ({ranked})")

        # Repeated identities keep every row (the nth "a" pairs with the nth "a").
        browser.evaluate("""document.getElementById('orderBy').value = '';
                            document.getElementById('old').value = '["a", "a", "b"]';
                            document.getElementById('new').value = '["a", "b", "a", "a"]';
                            document.getElementById('run').click(); true""")
        browser.wait_for("""[...document.querySelectorAll('#table li')].map(li => li.textContent).join() === '"a","b","a","a"'
                            && !document.querySelector('#table li.deleting')""", "a list with repeated identities to animate")

        # 3. The live tab, on the JavaScript client (/batchdiff.js): long polls with merge values.
        first = request("PUT", origin + "/feeds/demo", [{"id": 1, "title": "One"}, {"id": 2, "title": "Two"}])["version"]
        browser.evaluate("document.getElementById('tab-live').click(); document.getElementById('feed').value = 'demo';"
                         "document.querySelector('#follow button').click(); true")
        browser.wait_for(f"document.getElementById('liveVersion').textContent === 'version {first}'", "the feed's first version")
        browser.wait_for("document.getElementById('liveStatus').textContent.startsWith('Following')", "the follower to read the feed")
        second = request("PUT", origin + "/feeds/demo", [{"id": 2, "title": "Two"}, {"id": 3, "title": "Three"}, {"id": 1, "title": "Uno"}])["version"]
        browser.wait_for(f"document.getElementById('liveVersion').textContent === 'version {second}'", "the answer of the second version")
        browser.wait_for("[...document.querySelectorAll('#liveTable li')].map(li => li.textContent).join() === 'Two,Three,Uno'",
                         "the live list to show the second version")
        third = request("PUT", origin + "/feeds/demo", [{"id": 2, "title": "Dos"}, {"id": 3, "title": "Three"}, {"id": 1, "title": "Uno"}])["version"]
        browser.wait_for(f"document.getElementById('liveVersion').textContent === 'version {third}'", "the answer of the third version")
        browser.wait_for("[...document.querySelectorAll('#liveTable li')].map(li => li.textContent).join() === 'Dos,Three,Uno'",
                         "the live list to show the third version")
        logged = browser.evaluate("document.getElementById('events').firstChild.textContent")
        if logged != f"version {third}: 0 inserted, 0 deleted, 0 moved, 1 reloaded (1 as merge patches)":
            fail(f"the third version did not come as one merge patch: {logged}")

        # 1. Nothing but the server, nothing wrong.
        browser.read(0.5)
        requested = [e["params"]["request"]["url"] for e in browser.events if e["method"] == "Network.requestWillBeSent"]
        elsewhere = [u for u in requested if not u.startswith(origin + "/")]
        if elsewhere:
            fail(f"the page asked other hosts: {elsewhere}")
        problems = [e["params"] for e in browser.events
                    if e["method"] == "Runtime.exceptionThrown"
                    or (e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
                    or (e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
        if problems:
            fail(f"console errors: {json.dumps(problems)[:2000]}")
        check_readme_page(browser, origin, pages)
        print(f"playground-check: ok ({len(requested)} requests, all to {origin}; no console errors; "
              f"the examples' batches, steps and patches shown (companies, leaderboard); a live feed followed by the JavaScript client "
              f"with merge values; README's browser page followed a feed from {pages.origin})")
    finally:
        if browser:
            browser.close()
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        subprocess.run(["rm", "-rf", profile])


if __name__ == "__main__":
    main()
