#!/usr/bin/env bash
# Checks that BatchDiff's libraries work as a versioned dependency of another package, as
# an app or a backend would use them:
#  1. copies this working tree into a fresh git repository and tags it 0.1.0;
#  2. writes a throwaway package that depends on it as an app does, with `.package(url:
#     "file://…", from: "0.1.0", traits: [])` (the server's trait off), and uses `BatchDiff`,
#     `BatchDiffJSON` and `BatchDiffClient` through their public API only (SwiftPM refuses
#     such a dependency if it has unsafe build flags);
#  3. builds it in release mode (offline: the package copies on this machine serve it) and
#     runs it: it diffs, applies and writes batches and exits non-zero when a result is wrong;
#  4. checks that it resolved BatchDiff alone: none of the server's packages (argument
#     parser, logging, metrics, Prometheus, service lifecycle, crypto, collections).
# The consumer's build folder is kept in .build/package-check, so reruns are quick.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'package-check: %s\n' "$*"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scratch=$PWD/.build/package-check

# --- 1. A tagged copy of the working tree (uncommitted changes included) ----------------
mkdir "$work/batchdiff"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
  [ -e "$file" ] && printf '%s\0' "$file"
done | tar -c --null -T - | tar -x -C "$work/batchdiff"
git -C "$work/batchdiff" init -q
git -C "$work/batchdiff" add -A
git -C "$work/batchdiff" -c user.name=check -c user.email=check@localhost commit -q -m "package check"
git -C "$work/batchdiff" tag 0.1.0

# --- 2. The consumer ------------------------------------------------------------------------
mkdir -p "$work/consumer/Sources/Consumer"
cat > "$work/consumer/Package.swift" <<EOF
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(url: "file://$work/batchdiff", from: "0.1.0", traits: [])],
    targets: [
        .executableTarget(name: "Consumer", dependencies: [
            .product(name: "BatchDiff", package: "batchdiff"),
            .product(name: "BatchDiffJSON", package: "batchdiff"),
            .product(name: "BatchDiffClient", package: "batchdiff"),
        ]),
    ]
)
EOF
cat > "$work/consumer/Sources/Consumer/main.swift" <<'EOF'
import BatchDiff
import BatchDiffClient
import BatchDiffJSON
import Foundation

/// An app's own row type: identity by id, content by every field.
struct Product: Diffable, Equatable {
    var id: Int
    var name: String
    var identity: Int { id }
}

func check(_ condition: @autoclosure () -> Bool, _ what: String) {
    guard condition() else { fatalError("FAIL: \(what)") }
    print("ok: \(what)")
}

// The differ on the app's own type, checked by applying the batch.
let old = [Product(id: 1, name: "Kindle"), Product(id: 2, name: "iPad"), Product(id: 3, name: "iPod")]
let new = [Product(id: 3, name: "iPod"), Product(id: 2, name: "New iPad"), Product(id: 4, name: "iPhone")]
let list = batch(from: old, to: new)
check(list.rows.deleted == [0] && list.rows.inserted == [2] && list.rows.reloaded == [1], "list batch \(list.rows)")
check(list.rows.moved == [Move(from: 2, to: 0)], "list move \(list.rows.moved)")
check((try? list.apply(to: old, values: list.values(from: new))) == new, "applying the list batch gives the new list")

let sections = [Section(header: ListHeader(), items: old)]
let sectioned = batch(from: sections, to: [Section(header: ListHeader(), items: new)])
check(sectioned.rows.deleted == [RowPath(section: 0, row: 0)] && sectioned.oldCounts == [3], "sectioned batch")

// The JSON front: read two collections, diff them, write the batch.
func collection(_ text: String) throws -> JSONCollection {
    try JSONDocument(bytes: Array(text.utf8)).root.collection(idKey: "id", path: "body")
}
let jsonBatch = try JSONBatch(
    from: collection(#"[{"id":1,"t":"a"},{"id":2,"t":"b"}]"#), to: collection(#"[{"id":2,"t":"b"},{"id":3,"t":"c"}]"#),
    options: DiffOptions()
)
var output = JSONOutput()
try output.batch(jsonBatch)
let text = String(decoding: output.bytes, as: UTF8.self)
check(text == #"{"rows":{"deleted":[0],"inserted":[1],"reloaded":[],"moved":[]},"counts":{"old":2,"new":2}}"#, "JSON batch \(text)")

// The client library: a changes answer decoded into the app's own type and applied.
struct Item: Decodable, Identifiable, Equatable {
    var id: Int
    var t: String
}
let answer = #"{"feed":"f","from":1,"to":2,"rows":{"deleted":[0],"inserted":[1],"reloaded":[],"moved":[]},"counts":{"old":2,"new":2},"values":{"rows":{"inserted":[{"id":3,"t":"c"}],"reloaded":[]}}}"#
let changes = try JSONDecoder().decode(FeedChanges<JSON, Item>.self, from: Data(answer.utf8))
let held = FeedCollection<JSON, Item>.list([Item(id: 1, t: "a"), Item(id: 2, t: "b")])
let applied = try changes.applied(to: held)
check(applied == .list([Item(id: 2, t: "b"), Item(id: 3, t: "c")]), "client applies a changes answer")
let _: FeedFollower<JSON, Item, Int> = FeedFollower(FollowerConfiguration(serverURL: "http://127.0.0.1:8080", feed: "f", transport: SocketTransport()))
EOF

# --- 3. Build and run -----------------------------------------------------------------------
say "building a package that depends on BatchDiff from: \"0.1.0\""
if ! swift build -c release --package-path "$work/consumer" --scratch-path "$scratch" > "$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  say "FAIL: the consumer did not build"
  exit 1
fi
"$scratch/release/Consumer"

# --- 4. What it resolved --------------------------------------------------------------------
resolved=$(grep -o '"identity" : "[^"]*"' "$work/consumer/Package.resolved" | sed 's/.*: //; s/"//g' | sort | tr '\n' ' ')
if [ "$resolved" != "batchdiff " ]; then
  say "FAIL: an app of the client libraries resolved: $resolved(BatchDiff alone expected)"
  exit 1
fi
say "an app of the client libraries resolves BatchDiff alone"
say "OK"
