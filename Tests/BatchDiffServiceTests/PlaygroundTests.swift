import Foundation
import XCTest

/// `GET /` is the playground page, compiled into the binary; it names no other host.
/// (`scripts/playground-check.py` runs it in headless Chromium.)
final class PlaygroundTests: ServerTestCase {
    func testThePlaygroundIsServedWithoutATokenAndNamesNoOtherHost() throws {
        let server = try startServer(["--read-token", "reader"])
        let page = try server.client.get("/")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.header("content-type"), "text/html; charset=utf-8")
        XCTAssertTrue(page.header("content-security-policy")?.contains("connect-src 'self'") == true)
        XCTAssertTrue(page.text.contains("<title>BatchDiff playground</title>"))
        XCTAssertFalse(page.text.contains("://"), "the page names no host: every asset is inline or this server's, every call relative")
        XCTAssertFalse(page.text.contains("<script src") || page.text.contains("<link rel=\"stylesheet\""))
        XCTAssertTrue(page.text.contains(#"import { followFeed } from "/batchdiff.js";"#), "the live tab runs on the JavaScript client")
        let head = try server.client.request("HEAD", "/")
        XCTAssertEqual(head.status, 200)
        assertProblem(try server.client.request("POST", "/", body: Array("{}".utf8)), 405, "method_not_allowed")
    }

    func testTheJavaScriptClientIsServedAsTheModuleInTheRepository() throws {
        let server = try startServer(["--read-token", "reader"])
        let module = try server.client.get("/batchdiff.js")
        XCTAssertEqual(module.status, 200)
        XCTAssertEqual(module.header("content-type"), "text/javascript; charset=utf-8")
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../clients/js/batchdiff.js").standardized
        XCTAssertEqual(module.body, Array(try Data(contentsOf: file)), "the binary serves clients/js/batchdiff.js as it is")
    }
}
