/// The answer to `changes`: its JSON (a bare JSON Patch array in that format, else an
/// object), shared with every client that asked the same, and the latest version it leads to.
package struct ChangesAnswer: Sendable {
    /// The answer, shared.
    package var answer: SharedAnswer
    /// The version it leads to.
    package var latest: Int
    /// The operations of its batch (0: the client's data, or window, is as at `latest`).
    package var operationCount: Int

    /// The answer's JSON.
    package var body: [UInt8] { answer.bytes }
}
