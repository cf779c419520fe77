import ArgumentParser
import BatchDiffClient
import Foundation

/// `batchdiff follow FEED --url URL`: the client library's follower on the command line.
struct FollowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow",
        abstract: "Print a feed's whole collection as one JSON line per version, as versions come, until interrupted.",
        discussion: """
            Each line is {"version": V, "data": <the whole collection>} (with --offset or --limit, \
            "data" holds that window of the rows and "total" counts them all), written as soon as the \
            version is known. The feed is long polled; a version no longer retained or a \
            feed deleted and created again is fetched whole again, and restarts, 503s, \
            network errors and a feed that does not exist yet are waited out, each wait \
            told on standard error.
            """
    )

    @Argument(help: "The feed's id.")
    var feed: String

    @Option(help: "The server's base URL, http:// only (BATCHDIFF_URL).")
    var url = Environment.string("BATCHDIFF_URL", default: "http://127.0.0.1:8080")

    @Option(help: "Bearer token for reads (BATCHDIFF_TOKEN).")
    var token: String?

    @Option(help: "Seconds each long poll waits at the server.")
    var wait = 30

    @Option(name: .customLong("id-key"), help: "The member that holds an item's identity (the feed's idKey).")
    var idKey = "id"

    @Option(help: "How changed rows come: merge (patches of the rows held, the default) or whole (BATCHDIFF_VALUES).")
    var values = Environment.string("BATCHDIFF_VALUES", default: FeedValues.merge.rawValue)

    @Option(help: "Follow only the window of the rows (a sectioned feed's sections) that starts here (default 0).")
    var offset: Int?

    @Option(help: "Follow only a window of this many rows (sections) (1 to 10000; default 100 with --offset).")
    var limit: Int?

    func validate() throws {
        guard url.hasPrefix("http://") else { throw ValidationError("--url must be an http:// URL, not \(url)") }
        guard wait >= 0 else { throw ValidationError("--wait must not be negative") }
        if let offset, offset < 0 { throw ValidationError("--offset must not be negative") }
        if let limit, !(1...10_000).contains(limit) { throw ValidationError("--limit must be 1 to 10000") }
        guard FeedValues(rawValue: values) != nil else { throw ValidationError("--values must be merge or whole, not \(values)") }
    }

    /// The window `--offset` and `--limit` ask for, if any.
    private var window: RowWindow? {
        guard offset != nil || limit != nil else { return nil }
        return RowWindow(offset: offset ?? 0, limit: limit ?? 100)
    }

    func run() async throws {
        FileHandle.standardError.write(Data("follow \(feed): following \(url)\n".utf8))
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(
                serverURL: url, feed: feed, token: token ?? Environment.string("BATCHDIFF_TOKEN"), transport: SocketTransport(), wait: wait,
                values: FeedValues(rawValue: values) ?? .merge, idKey: idKey, window: window.map(FollowedWindow.init)
            ) { [feed] reason, seconds in
                FileHandle.standardError.write(Data("follow \(feed): \(reason); trying again in \(String(format: "%.1f", seconds)) s\n".utf8))
            }
        ) { [idKey] in $0.identity(idKey: idKey) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            for try await update in follower {
                var line = try encoder.encode(FollowLine(version: update.version, data: update.collection, total: update.total))
                line.append(UInt8(ascii: "\n"))
                FileHandle.standardOutput.write(line)
            }
        } catch {
            throw CommandFailure("follow \(feed): \(error)")
        }
    }
}

/// One line of `follow`'s output.
private struct FollowLine: Encodable {
    var version: Int
    var data: FeedCollection<JSON, JSON>
    /// Following a window: the whole collection's rows (`data` holds the window's).
    var total: Int?
}
