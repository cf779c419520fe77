import BatchDiffClient
import Foundation
import XCTest

/// gzip both ways: answers over 1 KiB compressed for clients that accept it, bodies sent
/// gzip inflated within the body limit. Checked with Debian's `gzip`, an independent codec.
final class CompressionTests: ServerTestCase {
    /// `input` through the `gzip` command with `arguments` (`-c` compresses, `-dc` inflates).
    private func gzipTool(_ arguments: [String], _ input: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "gzip \(arguments)")
        return Array(output)
    }

    private func items(_ count: Int) -> String {
        "[" + (0..<count).map { #"{"id":\#($0),"title":"Item number \#($0)","price":\#($0 % 97).5}"# }.joined(separator: ",") + "]"
    }

    func testAnswersOver1KiBAreGzippedForClientsThatAcceptIt() throws {
        let client = try startServer().client
        let version = assertVersion(try client.put("/feeds/big", items(2000)))
        let plain = try client.get("/feeds/big")
        XCTAssertNil(plain.header("content-encoding"))
        XCTAssertEqual(plain.header("vary"), "Accept-Encoding")
        XCTAssertEqual(plain.header("etag"), "\"\(version)\"")
        for accept in ["gzip", "deflate, gzip;q=0.5", "*", "GZIP"] {
            let compressed = try client.get("/feeds/big", headers: ["Accept-Encoding": accept])
            XCTAssertEqual(compressed.header("content-encoding"), "gzip", accept)
            XCTAssertEqual(compressed.header("vary"), "Accept-Encoding")
            XCTAssertEqual(compressed.header("etag"), "\"\(version)-gzip\"", "a compressed answer's tag names its version and encoding")
            XCTAssertEqual(try gzipTool(["-dc"], compressed.body), plain.body, accept)
            XCTAssertLessThan(compressed.body.count * 2, plain.body.count, "well under half")
        }
        for refused in ["gzip;q=0", "identity", "br", "*;q=0", "gzip;q=0, *"] {
            XCTAssertNil(try client.get("/feeds/big", headers: ["Accept-Encoding": refused]).header("content-encoding"), refused)
        }
        // The changes answer, with its values, likewise; small answers stay plain.
        let changes = try client.get("/feeds/big/changes?since=0", headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(changes.header("content-encoding"), "gzip")
        XCTAssertEqual(try gzipTool(["-dc"], changes.body), try client.get("/feeds/big/changes?since=0").body)
        let small = try client.get("/healthz", headers: ["Accept-Encoding": "gzip"])
        XCTAssertNil(small.header("content-encoding"))
        XCTAssertNil(small.header("vary"))
        // Both tags of a version give a 304 whose tag is the one the answer would carry;
        // If-None-Match compares weakly, so a weak tag names the version too.
        for (sent, accept, returned) in [
            ("\"\(version)-gzip\"", "gzip", "\"\(version)-gzip\""), ("\"\(version)\"", "gzip", "\"\(version)-gzip\""),
            ("\"\(version)-gzip\"", "identity", "\"\(version)\""), ("W/\"\(version)\"", "gzip", "\"\(version)-gzip\""),
        ] {
            let notModified = try client.get("/feeds/big", headers: ["Accept-Encoding": accept, "If-None-Match": sent])
            XCTAssertEqual(notModified.status, 304, sent)
            XCTAssertEqual(notModified.header("etag"), returned, sent)
            XCTAssertEqual(notModified.header("vary"), "Accept-Encoding", sent)
        }
        XCTAssertEqual(try client.get("/feeds/big", headers: ["If-None-Match": "\"\(version + 1)-gzip\""]).status, 200)
        // If-Match compares strongly: a weak tag never matches; a spelling of another version neither.
        for refused in ["W/\"\(version)\"", "\"\(version)-br\"", "\"0\(version)\""] {
            assertProblem(try client.put("/feeds/big", "[1]", headers: ["If-Match": refused]), 412, "precondition_failed")
        }
    }

    /// The read-modify-write loop of every HTTP library that asks for gzip by default
    /// (URLSession, OkHttp, requests): GET, then PUT with `If-Match` set to the ETag received.
    /// It livelocked when a compressed answer's tag was weak: 14 of 20 writes got 412.
    func testTheETagOfACompressedAnswerWorksInIfMatch() throws {
        let client = try startServer().client
        _ = assertVersion(try client.put("/feeds/rmw", items(100)))
        for round in 0..<20 {
            let read = try client.get("/feeds/rmw", headers: ["Accept-Encoding": "gzip"])
            XCTAssertEqual(read.header("content-encoding"), "gzip", "round \(round): big enough to be compressed")
            let tag = try XCTUnwrap(read.header("etag"))
            let version = try XCTUnwrap(int((try JSONSerialization.jsonObject(with: Data(try gzipTool(["-dc"], read.body))) as? [String: Any])?["version"]))
            XCTAssertEqual(tag, "\"\(version)-gzip\"")
            let written = try client.put("/feeds/rmw", items(101 + round), headers: ["If-Match": tag, "Accept-Encoding": "gzip"])
            XCTAssertEqual(written.status, 200, "round \(round): \(written.text)")
            XCTAssertEqual(written.header("etag"), "\"\(version + 1)\"", "round \(round): a small answer is sent plain")
        }
        // The plain tag of the same version works as well, once.
        let plain = try client.get("/feeds/rmw")
        let tag = try XCTUnwrap(plain.header("etag"))
        XCTAssertEqual(try client.put("/feeds/rmw", "[1]", headers: ["If-Match": tag]).status, 200)
        assertProblem(try client.put("/feeds/rmw", "[2]", headers: ["If-Match": tag]), 412, "precondition_failed")
    }

    func testGzipBodiesAreInflatedWithinTheLimit() throws {
        let server = try startServer(["--body-limit", "\(8 << 20)"])
        let client = server.client
        // A 5 MB snapshot sent as a fraction of that.
        let snapshot = Array(items(100_000).utf8)
        XCTAssertGreaterThan(snapshot.count, 5 << 20)
        let body = try gzipTool(["-c"], snapshot)
        let version = assertVersion(try client.request("PUT", "/feeds/g", body: body, headers: ["Content-Encoding": "gzip"], timeout: 60))
        let stored = assertJSON(try client.get("/feeds/g", timeout: 60))
        XCTAssertEqual(stored["version"] as? Int, version)
        XCTAssertEqual((stored["data"] as? [Any])?.count, 100_000)
        // Two members make one body; POST /diff too.
        let diff = try gzipTool(["-c"], Array(#"{"old": [1, 2], "#.utf8)) + gzipTool(["-c"], Array(#""new": [2, 3]}"#.utf8))
        let batch = assertJSON(try client.request("POST", "/diff", body: diff, headers: ["Content-Encoding": "gzip"]))
        XCTAssertEqual(canonicalJSON(batch["counts"]!), canonicalJSON(["old": 2, "new": 2]))
        // A bomb past the limit (26 MB from a few kilobytes) is a 413; damaged or cut short, a 400; another coding, a 415;
        // none of them changes the feed.
        let bomb = try gzipTool(["-c"], Array("[".utf8) + Array(repeating: UInt8(ascii: "0"), count: 1) + Array(String(repeating: ",0", count: 13 << 20).utf8) + Array("]".utf8))
        assertProblem(try client.request("PUT", "/feeds/g", body: bomb, headers: ["Content-Encoding": "gzip"], timeout: 60), 413, "body_too_large")
        assertProblem(try client.request("PUT", "/feeds/g", body: Array("[1, 2]".utf8), headers: ["Content-Encoding": "gzip"]), 400, "invalid_encoding")
        assertProblem(try client.request("PUT", "/feeds/g", body: Array(try gzipTool(["-c"], Array("[1, 2]".utf8)).dropLast(5)), headers: ["Content-Encoding": "gzip"]), 400, "invalid_encoding")
        assertProblem(try client.request("PUT", "/feeds/g", body: Array("[1]".utf8), headers: ["Content-Encoding": "br"]), 415, "unsupported_media_type")
        // The route's own refusal comes first (it answered 415 before).
        assertProblem(try client.request("PUT", "/nowhere", body: Array("[1]".utf8), headers: ["Content-Encoding": "br"]), 404, "not_found")
        assertProblem(try client.request("GET", "/nowhere", headers: ["Content-Encoding": "br"]), 404, "not_found")
        XCTAssertEqual(assertJSON(try client.get("/feeds/g", timeout: 60))["version"] as? Int, version)
        XCTAssertEqual(try client.get("/healthz").status, 200)
    }

    /// The client library's own transport asks for gzip and inflates it.
    func testTheSocketTransportReadsGzipAnswers() async throws {
        let server = try startServer()
        let text = items(3000)
        _ = assertVersion(try server.client.put("/feeds/s", text))
        let response = try await SocketTransport().send(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(server.port)/feeds/s", timeout: 10))
        XCTAssertEqual(response.status, 200)
        XCTAssertNil(response.header("content-encoding"), "inflated")
        let snapshot = try JSONDecoder().decode(FeedSnapshot<JSON, JSON>.self, from: Data(response.body))
        XCTAssertEqual(snapshot.data, try JSONDecoder().decode(FeedCollection<JSON, JSON>.self, from: Data(text.utf8)))
    }
}
