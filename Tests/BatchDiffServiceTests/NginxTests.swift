import BatchDiff
import Foundation
import Glibc
import XCTest

/// nginx (Debian's package, `make deps-test`) in front of two servers sharing one
/// PostgreSQL store, round robin on loopback, with the repository's own template
/// (`deploy/nginx/batchdiff.conf.template`, the one docs/deployment.md shows): a
/// client that follows a feed through it sees one series of versions, each batch taking
/// its copy from the version it had to the next, whichever server answers.
final class NginxTests: ServerTestCase {
    func testAClientThroughNginxSeesOneSeriesOfVersions() throws {
        let cluster = try PostgresCluster()
        let servers = try (0..<2).map { _ in try startServer(["--store", cluster.uri]) }
        for server in servers {
            XCTAssertTrue(eventually(timeout: 10) { (try? server.client.get("/readyz").status) == 200 }, "the server did not get ready")
        }
        let nginx = try NginxProcess(replicas: servers.map(\.port))
        let client = HTTPClient(port: nginx.port)

        var firstGenerator = SnapshotGenerator(seed: 11)
        let firstContent = firstGenerator.nextList(after: [])
        let first = assertVersion(try client.put("/feeds/followed", jsonText(firstContent)))
        let written = Collector<(version: Int, content: [JSONElement])>()
        written.append((first, listElements(firstContent)))
        let finished = Collector<Bool>()
        let writer = Thread {
            // The same generator again, past the first version.
            var generator = SnapshotGenerator(seed: 11)
            var content = generator.nextList(after: [])
            for _ in 0..<40 {
                content = generator.nextList(after: content)
                guard let response = try? client.put("/feeds/followed", jsonText(content)), response.status == 200,
                      let version = int(response.object["version"]) else { return }
                written.append((version, listElements(content)))
                usleep(20_000)
            }
            finished.append(true)
        }

        // The client: the whole feed once, then batches, each long poll through nginx.
        let start = assertJSON(try client.get("/feeds/followed"))
        var version = try XCTUnwrap(int(start["version"]))
        var copy = listElements(start["data"]!)
        var seen: [(version: Int, content: [JSONElement])] = [(version, copy)]
        writer.start()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && (finished.all.isEmpty || version < (written.all.map(\.version).max() ?? 0)) {
            let response = try client.get("/feeds/followed/changes?since=\(version)&wait=2", timeout: 10)
            let answer = assertJSON(response)
            guard let to = int(answer["to"]) else { return XCTFail("no `to`: \(response.text)") }
            XCTAssertEqual(int(answer["from"]), version, "each batch starts at the version the client has")
            XCTAssertGreaterThanOrEqual(to, version, "versions never go back")
            copy = try decodeListBatch(answer).apply(to: copy, values: decodeListValues(answer))
            version = to
            seen.append((version, copy))
        }
        XCTAssertEqual(written.all.count, 41, "the writer did not finish")
        XCTAssertGreaterThan(Set(seen.map(\.version)).count, 5, "the client followed a few versions")
        let acknowledged = Dictionary(written.all.map { ($0.version, $0.content) }) { first, _ in first }
        for (version, copy) in seen {
            XCTAssertEqual(copy, acknowledged[version], "the client's copy at version \(version) is what was written")
        }
        XCTAssertEqual(version, written.all.last?.version, "the client reached the last version")
    }
}

/// nginx with `deploy/nginx/batchdiff.conf.template` rendered for `replicas` on a free
/// port of 127.0.0.1, in the foreground as one process (no master, no workers), its files
/// in a temporary directory. Stopped when dropped.
extension NginxTests {
    /// The shipped `nginx.conf`, with the cache template rendered by `render.sh` for three
    /// replicas as docs/deployment.md shows, runs and answers through every replica.
    func testTheShippedConfigurationRunsARenderedTemplate() throws {
        let servers = try (0..<3).map { _ in try startServer() }
        let nginx = try NginxProcess(
            replicas: servers.map(\.port), template: "batchdiff-cache.conf.template", publicFeeds: "leaderboard", shippedConfiguration: true
        )
        let through = HTTPClient(port: nginx.port)
        for _ in 0..<6 { XCTAssertEqual(try through.get("/healthz").status, 200) }
        for server in servers {
            XCTAssertGreaterThan(try server.client.requestsAnswered("GET", "/healthz"), 0, "round robin over every replica: \(nginx.errorLog)")
        }
    }

    /// Through the repository's nginx template, an event stream's head and each event reach
    /// the client at once (nothing held in a proxy buffer), and its heartbeats keep it open.
    func testEventStreamsPassThroughNginxAtOnce() throws {
        let server = try startServer(["--event-heartbeat", "1"])
        let nginx = try NginxProcess(replicas: [server.port, server.port])
        let version = assertVersion(try server.client.put("/feeds/proxied", "[1]"))
        let stream = try EventStreamClient(HTTPClient(port: nginx.port), "/feeds/proxied/changes?since=\(version)")
        XCTAssertEqual(stream.head.status, 200)
        XCTAssertEqual(stream.head.header("content-type"), "text/event-stream; charset=utf-8")
        for next in 1...3 {
            let written = Date()
            assertVersion(try server.client.put("/feeds/proxied", "[1, \(next + 1)]"), version + next)
            XCTAssertEqual(try stream.next(timeout: 5)?.id, String(version + next))
            XCTAssertLessThan(Date().timeIntervalSince(written), 1, "the event waited in the proxy")
        }
        XCTAssertThrowsError(try stream.next(timeout: 2.5), "no event without a version")
        XCTAssertGreaterThanOrEqual(stream.comments.count, 2, "heartbeats pass through too")
    }
}

final class NginxProcess {
    let port: UInt16
    private let process = Process()
    private let directory: URL

    /// The error log's lines so far.
    var errorLog: String { (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? "" }

    /// The access log's lines so far, as the template writes them.
    var accessLog: String { (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? "" }

    /// nginx with the template `template` of `deploy/nginx/` (a cache's files in its
    /// directory), in front of `replicas`, rendered by `deploy/nginx/render.sh` as docs/deployment.md
    /// shows (`publicFeeds`: its BATCHDIFF_PUBLIC_FEEDS). With `shippedConfiguration`, nginx
    /// runs `deploy/nginx/nginx.conf` as it is, but for where it includes the rendered file
    /// and logs errors (in the directory), run in the foreground as one process.
    init(replicas: [UInt16], template: String = "batchdiff.conf.template", publicFeeds: String? = nil, shippedConfiguration: Bool = false) throws {
        port = try freeLoopbackPort()
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("batchdiff-nginx-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../deploy/nginx").standardized
        var environment = [
            "NGINX_PORT": "127.0.0.1:\(port)", "NGINX_CACHE_DIR": directory.appendingPathComponent("cache").path,
            "NGINX_ACCESS_LOG": directory.appendingPathComponent("access.log").path,
            "BATCHDIFF_REPLICAS": replicas.map { "127.0.0.1:\($0)" }.joined(separator: " "),
        ]
        if let publicFeeds { environment["BATCHDIFF_PUBLIC_FEEDS"] = publicFeeds }
        let render = try CommandRun(
            executable: folder.appendingPathComponent("render.sh"), [folder.appendingPathComponent(template).path], environment: environment
        )
        guard render.status == 0 else { throw ServerError("render.sh \(template): \(render.error)") }
        try render.output.write(to: directory.appendingPathComponent("batchdiff.conf"), atomically: true, encoding: .utf8)
        let path = directory.path
        if shippedConfiguration {
            let shipped = try String(contentsOf: folder.appendingPathComponent("nginx.conf"), encoding: .utf8)
            let moved = shipped.replacingOccurrences(of: "include /etc/nginx/batchdiff.conf;", with: "include \(path)/batchdiff.conf;")
                .replacingOccurrences(of: "error_log /var/log/nginx/error.log warn;", with: "error_log \(path)/error.log warn;")
            guard moved != shipped else { throw ServerError("deploy/nginx/nginx.conf no longer includes /etc/nginx/batchdiff.conf") }
            try moved.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        } else {
            try """
            daemon off;
            master_process off;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            worker_rlimit_nofile 16384;
            events { worker_connections 8192; }
            http {
                access_log off;
                client_body_temp_path \(path)/body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                include \(path)/batchdiff.conf;
            }
            """.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        }
        let foreground = shippedConfiguration ? ["-g", "daemon off; master_process off; pid \(path)/nginx.pid;"] : []
        ServerProcess.endingWithThisProcess(
            process, URL(fileURLWithPath: "/usr/sbin/nginx"), ["-p", path, "-e", "\(path)/error.log", "-c", "\(path)/nginx.conf"] + foreground
        )
        process.standardInput = FileHandle.nullDevice
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") else { throw ServerError("no nginx: run make deps-test") }
        try process.run()
        let client = HTTPClient(port: port)
        guard eventually(timeout: 10, { (try? client.get("/healthz", timeout: 1).status) == 200 }) else {
            let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            throw ServerError("nginx did not answer: \(log)")
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGQUIT)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
