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
        XCTAssertFalse(page.text.contains("://"), "the page names no host: every asset is inline, every call relative")
        XCTAssertFalse(page.text.contains("<script src") || page.text.contains("<link rel=\"stylesheet\""))
        let head = try server.client.request("HEAD", "/")
        XCTAssertEqual(head.status, 200)
        assertProblem(try server.client.request("POST", "/", body: Array("{}".utf8)), 405, "method_not_allowed")
    }
}
