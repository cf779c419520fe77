import Foundation
import XCTest

/// Checks that `response` is an RFC 9457 problem document with `status` and `code`:
/// `application/problem+json`, and the members type, title, status, detail and code.
/// Returns the document.
@discardableResult
func assertProblem(
    _ response: HTTPResult, _ status: Int, _ code: String, file: StaticString = #filePath, line: UInt = #line
) -> [String: Any] {
    XCTAssertEqual(response.status, status, "status; body: \(response.text)", file: file, line: line)
    let mediaType = response.header("content-type")?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    XCTAssertEqual(mediaType, "application/problem+json", "content type", file: file, line: line)
    let document = response.object
    XCTAssertEqual(document["type"] as? String, "urn:batchdiff:\(code)", "type; body: \(response.text)", file: file, line: line)
    XCTAssertEqual(document["code"] as? String, code, "code; body: \(response.text)", file: file, line: line)
    XCTAssertEqual((document["status"] as? NSNumber)?.intValue, status, "status member; body: \(response.text)", file: file, line: line)
    XCTAssertFalse((document["title"] as? String ?? "").isEmpty, "title; body: \(response.text)", file: file, line: line)
    XCTAssertFalse((document["detail"] as? String ?? "").isEmpty, "detail; body: \(response.text)", file: file, line: line)
    return document
}

/// Checks a 200 JSON answer and returns its object.
@discardableResult
func assertJSON(_ response: HTTPResult, _ status: Int = 200, file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
    XCTAssertEqual(response.status, status, "status; body: \(response.text)", file: file, line: line)
    XCTAssertEqual(response.header("content-type")?.split(separator: ";").first.map(String.init), "application/json",
                   "content type", file: file, line: line)
    XCTAssertNotNil(response.json as? [String: Any], "body is not a JSON object: \(response.text)", file: file, line: line)
    return response.object
}

/// Polls `condition` every 10 ms for up to `timeout` seconds; whether it became true.
func eventually(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        if condition() { return true }
        usleep(10_000)
    } while Date() < deadline
    return condition()
}

/// The value of an integer member.
func int(_ value: Any?) -> Int? { (value as? NSNumber)?.intValue }

/// Runs `body` on `count` threads at once and waits (up to `timeout` s) for all of them.
func runConcurrently(_ count: Int, timeout: Double = 30, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    return group.wait(timeout: .now() + timeout) == .success
}

/// A value many threads append to.
final class Collector<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Element] = []
    func append(_ element: Element) { lock.lock(); storage.append(element); lock.unlock() }
    var all: [Element] { lock.lock(); defer { lock.unlock() }; return storage }
}

/// 2^53: feed versions stay below it, exact as JSON numbers everywhere (JavaScript too).
let versionLimit = 9_007_199_254_740_992

/// The entity tag naming feed version `version`: `"<version>"`.
func tag(_ version: Int) -> String { "\"\(version)\"" }

/// Checks a 200 answer naming a feed version (`PUT` or `GET /feeds/{id}`): its `version`
/// member is positive, below 2^53, named by its `ETag`, and `expected` when given. Returns
/// the version (0 when there is none), so that a test reads a feed's first version from the
/// server and checks the later ones relative to it.
@discardableResult
func assertVersion(_ response: HTTPResult, _ expected: Int? = nil, file: StaticString = #filePath, line: UInt = #line) -> Int {
    let object = assertJSON(response, file: file, line: line)
    guard let version = int(object["version"]) else {
        XCTFail("no version in \(response.text)", file: file, line: line)
        return 0
    }
    XCTAssertGreaterThan(version, 0, "a version is positive", file: file, line: line)
    XCTAssertLessThan(version, versionLimit, "a version stays below 2^53", file: file, line: line)
    XCTAssertEqual(response.header("etag"), tag(version), "the ETag names the version", file: file, line: line)
    if let expected { XCTAssertEqual(version, expected, "version; body: \(response.text)", file: file, line: line) }
    return version
}

/// Checks a 410 `version_gone` problem document whose `latest` member is `latest`.
@discardableResult
func assertVersionGone(_ response: HTTPResult, latest: Int, file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
    let problem = assertProblem(response, 410, "version_gone", file: file, line: line)
    XCTAssertEqual(int(problem["latest"]), latest, "latest; body: \(response.text)", file: file, line: line)
    return problem
}
