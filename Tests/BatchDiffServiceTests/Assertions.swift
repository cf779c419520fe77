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
