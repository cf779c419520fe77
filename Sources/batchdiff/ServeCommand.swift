import ArgumentParser
import BatchDiffEndpoints
import BatchDiffFeeds
import BatchDiffPostgres
import BatchDiffSQLite
import BatchDiffSource
import BatchDiffTokens
import Foundation
import HTTPServer
import Logging
import Metrics
import PostgreSQL
import Prometheus
import ServiceLifecycle
import UnixSignals

/// `batchdiff serve`: runs the HTTP server until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the HTTP server. Every flag can also be set with the environment variable shown."
    )

    @OptionGroup var address: ServerAddress

    @Option(help: "Largest request body, in bytes, at most 1 GiB (BATCHDIFF_BODY_LIMIT).")
    var bodyLimit = Environment.integer(.bodyLimit, default: 32 << 20)

    @Option(help: "Connections served at once (BATCHDIFF_MAX_CONNECTIONS).")
    var maxConnections = Environment.integer(.maxConnections, default: 4096)

    @Option(help: "Seconds a connection may stay idle before it is closed (BATCHDIFF_CONNECTION_TIMEOUT).")
    var connectionTimeout = Environment.integer(.connectionTimeout, default: 15)

    @Option(help: "Seconds a client may take to send a request's headers, at least 1; a keep-alive connection's wait for its next request counts too (BATCHDIFF_HEADER_TIMEOUT).")
    var headerTimeout = Environment.integer(.headerTimeout, default: 10)

    @Option(help: "Seconds a client may take to send a request's body, from the end of its headers, at least 1 (BATCHDIFF_BODY_TIMEOUT).")
    var bodyTimeout = Environment.integer(.bodyTimeout, default: 60)

    @Option(help: "Bytes a second a client must take of a whole answer of 32 KiB or more, measured over 30 s while the server still holds some of it to send, or its connection is closed; 0: no floor. Parked long polls and event streams are never measured (BATCHDIFF_MIN_SEND_RATE).")
    var minSendRate = Environment.integer(.minSendRate, default: 1024)

    @Option(help: "Server threads (BATCHDIFF_THREADS); default: one per core.")
    var threads = Environment.integer(.threads, default: ProcessInfo.processInfo.activeProcessorCount)

    @Option(help: "trace, debug, info, notice, warning, error or critical (BATCHDIFF_LOG_LEVEL).")
    var logLevel = Environment.string("BATCHDIFF_LOG_LEVEL", default: "info")

    @Option(help: "Bearer token that PUT, PATCH and DELETE need (BATCHDIFF_WRITE_TOKEN).")
    var writeToken: String?

    @Option(help: "Bearer token that reads need (BATCHDIFF_READ_TOKEN).")
    var readToken: String?

    @Option(help: "A JSON Web Key Set file whose keys verify signed bearer tokens naming the feeds they may read or write (docs/security.md): HS256 oct keys, EdDSA OKP Ed25519 and ES256 EC P-256 public keys, each with a kid; read again on SIGHUP, the keys in force kept when it does not read (BATCHDIFF_JWT_KEYS).")
    var jwtKeys: String?

    @Option(help: "The audience a signed token's aud must name; unchecked when unset (BATCHDIFF_JWT_AUDIENCE).")
    var jwtAudience: String?

    @Option(help: "Seconds a signed token is still taken past its exp and before its nbf, 0 to 86400 (BATCHDIFF_JWT_LEEWAY).")
    var jwtLeeway = Environment.integer(.jwtLeeway, default: 0)

    @Option(help: "Parked long polls and event streams one client may hold at once, beyond which it gets 429 too_many_streams; a client is a signed token's sub, else its token, else its address (behind a proxy, the proxy's for every client); 0: no limit (BATCHDIFF_MAX_STREAMS_PER_CLIENT).")
    var maxStreamsPerClient = Environment.integer(.maxStreamsPerClient, default: 0)

    @Option(help: "Feeds anyone may read, with or without a token: comma-separated feed-id patterns as in tokens (an id, or a prefix ending in *); the flag alone means *. Their read answers are public (shared caches keep them whoever asked); every other feed needs a token that grants it, its answers private (BATCHDIFF_PUBLIC_FEEDS: patterns, or true for *).")
    var publicFeeds: String?

    @Option(help: "Where feeds live: memory (nothing survives the process); sqlite:PATH, one SQLite file for one server that survives restarts and kill -9; or postgres://USER@HOST:PORT/DB (a libpq URI), PostgreSQL shared by any number of servers. With a file or a database, --max-feed-memory bounds what is kept in memory and --max-versions what the store keeps (BATCHDIFF_STORE).")
    var store = Environment.string("BATCHDIFF_STORE", default: "memory")

    @Option(help: "A PostgreSQL database (a libpq URI) whose rows make feeds, followed through logical replication; needs --shapes and wal_level=logical (docs/sources.md) (BATCHDIFF_SOURCE_DATABASE).")
    var sourceDatabase = Environment.string("BATCHDIFF_SOURCE_DATABASE")

    @Option(help: "The shapes file: which rows of the source database make which feeds, read again on SIGHUP (docs/sources.md) (BATCHDIFF_SHAPES).")
    var shapes = Environment.string("BATCHDIFF_SHAPES")

    @Option(help: "The source's logical replication slot, made when missing (BATCHDIFF_SOURCE_SLOT).")
    var sourceSlot = Environment.string("BATCHDIFF_SOURCE_SLOT", default: "batchdiff")

    @Option(help: "The source's publication, made for the shapes' tables when missing (BATCHDIFF_SOURCE_PUBLICATION).")
    var sourcePublication = Environment.string("BATCHDIFF_SOURCE_PUBLICATION", default: "batchdiff")

    @Option(help: "Seconds a sourced feed nobody read is kept before it is dropped, at least 1 (BATCHDIFF_SOURCE_IDLE).")
    var sourceIdle = Environment.integer(.sourceIdle, default: 3600)

    @Option(help: "Versions kept per feed (BATCHDIFF_MAX_VERSIONS).")
    var maxVersions = Environment.integer(.maxVersions, default: 64)

    @Option(help: "Bytes all feeds may hold (BATCHDIFF_MAX_FEED_MEMORY).")
    var maxFeedMemory = Environment.integer(.maxFeedMemory, default: 512 << 20)

    @Option(help: "Longest long-poll wait, in seconds (BATCHDIFF_MAX_WAIT).")
    var maxWait = Environment.integer(.maxWait, default: 60)

    @Option(help: "Origins whose web pages may call the server, comma-separated (https://app.example.com), or * for any; none by default (BATCHDIFF_CORS_ORIGIN).")
    var corsOrigin = Environment.string("BATCHDIFF_CORS_ORIGIN", default: "")

    @Option(help: "Seconds an event stream may go silent before a heartbeat comment is sent, 1 to 3600 (BATCHDIFF_EVENT_HEARTBEAT).")
    var eventHeartbeat = Environment.integer(.eventHeartbeat, default: 15)

    @Option(help: "Bytes that requests in flight may use for their bodies and parsing, each body byte counted \(BatchDiffService.memoryPerBodyByte) times; a request that would pass it gets 503 server_busy, one alone always fits (BATCHDIFF_REQUEST_MEMORY); default: a sixteenth of the memory the process may use (its cgroup's limit, else the machine's).")
    var requestMemory = Environment.integer(.requestMemory, default: ProcessMemory.available / 16)

    @Option(help: "Seconds to let requests in flight finish at shutdown; the default leaves room within docker stop's 10 s (BATCHDIFF_SHUTDOWN_GRACE).")
    var shutdownGrace = Environment.integer(.shutdownGrace, default: 8)

    /// Checks the service's settings; the server checks its own when it starts.
    func validate() throws {
        try Environment.validate(Environment.IntegerVariable.allCases)
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level: unknown level \(logLevel)") }
        for (name, value) in [("--max-versions", maxVersions), ("--max-feed-memory", maxFeedMemory)] where value < 1 {
            throw ValidationError("\(name) must be at least 1")
        }
        for (name, value) in [("--max-wait", maxWait), ("--shutdown-grace", shutdownGrace), ("--jwt-leeway", jwtLeeway), ("--max-streams-per-client", maxStreamsPerClient)] where value < 0 {
            throw ValidationError("\(name) must not be negative")
        }
        guard Double(jwtLeeway) <= TokenVerifier.maxLeeway else { throw ValidationError("--jwt-leeway must be at most 86400 seconds (a day)") }
        guard (1...3600).contains(eventHeartbeat) else { throw ValidationError("--event-heartbeat must be 1 to 3600 seconds") }
        _ = try PublicFeedsOption.patterns(publicFeeds)
        guard (sourceDatabase == nil) == (shapes == nil) else { throw ValidationError("--source-database and --shapes go together") }
        guard sourceIdle >= 1 else { throw ValidationError("--source-idle must be at least 1 second") }
        if let sourceDatabase {
            do {
                try PostgresConnection.checkConninfo(sourceDatabase)
            } catch {
                throw ValidationError("--source-database: \(ConninfoRedaction.redacted(error.message, of: sourceDatabase))")
            }
        }
        guard store == "memory" || sqlitePath?.isEmpty == false || isPostgres else {
            throw ValidationError("--store: expected memory, sqlite:PATH or postgres://..., not \(ConninfoRedaction.redacted(store).debugDescription)")
        }
    }

    /// Whether `--store` is a PostgreSQL connection URI.
    private var isPostgres: Bool { store.hasPrefix("postgres://") || store.hasPrefix("postgresql://") }

    /// The file of `--store sqlite:PATH`.
    private var sqlitePath: String? { store.hasPrefix("sqlite:") ? String(store.dropFirst("sqlite:".count)) : nil }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel)!
        LoggingSystem.bootstrap { label in
            var handler = BufferedLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "batchdiff")
        let metricsRegistry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(BatchDiffService.prometheusFactory(registry: metricsRegistry))
        ProcessSetup.keepFreedMemory()
        let openFiles = ProcessSetup.raiseOpenFileLimit()
        ProcessSetup.ignoreBrokenPipes()

        var (service, keysPath) = try serviceConfiguration()
        let source = try feedSource(logger: logger)
        service.source = source
        let batchDiff = BatchDiffService(
            configuration: service, store: try feedStore(logger: logger), logger: logger, metricsRegistry: metricsRegistry,
            accessLog: { [label = logger.label] line in BufferedLogHandler.sink.append(access: line, label: label) }
        )
        do {
            try await source?.start(feeds: batchDiff.feeds)
        } catch {
            throw CommandFailure("--shapes: \(error)")
        }
        let shownHost = address.host.contains(":") ? "[\(address.host)]" : address.host
        let server = HTTPServerService(
            configuration: httpConfiguration(openFiles: openFiles, logger: logger), service: batchDiff, grace: .seconds(shutdownGrace), logger: logger
        ) { [address, threads, store] port in
            print("batchdiff listening on http://\(shownHost):\(port)")
            fflush(nil)
            logger.notice("listening", metadata: [
                "host": "\(address.host)", "port": "\(port)", "threads": "\(threads)", "store": "\(ConninfoRedaction.redacted(store))",
            ])
        }
        // SIGHUP is trapped here, before the server starts: once "listening" is printed, it
        // reads the keys and the shapes again and never ends the process.
        let reloader = HangUpReloader(
            keys: keysPath.flatMap { path in service.tokenKeys.map { (path, $0) } }, source: source,
            hangUps: await UnixSignalsSequence(trapping: .sighup), logger: logger
        )
        let services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: server, successTerminationBehavior: .gracefullyShutdownGroup), .init(service: reloader),
        ]
        // The group traps SIGTERM and SIGINT before it starts the server, so a signal sent
        // once "listening" is printed always stops it gracefully.
        var group = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // The server bounds its own shutdown by the grace period; this is a backstop.
        group.maximumGracefulShutdownDuration = .seconds(shutdownGrace + 5)
        do {
            try await ServiceGroup(configuration: group).run()
        } catch {
            BufferedLogHandler.sink.flush()
            throw CommandFailure("\(error)")
        }
        logger.notice("stopped")
        BufferedLogHandler.sink.flush()
    }

    /// The service's settings from the flags (and their environment variables), and the
    /// path of the token keys, when given (read again on `SIGHUP`).
    private func serviceConfiguration() throws -> (ServiceConfiguration, keysPath: String?) {
        var service = ServiceConfiguration()
        service.writeToken = writeToken ?? Environment.string("BATCHDIFF_WRITE_TOKEN")
        service.readToken = readToken ?? Environment.string("BATCHDIFF_READ_TOKEN")
        let keysPath = jwtKeys ?? Environment.string("BATCHDIFF_JWT_KEYS")
        if let keysPath {
            do {
                service.tokenKeys = try TokenKeyring(
                    json: try HangUpReloader.read(keysPath), audience: jwtAudience ?? Environment.string("BATCHDIFF_JWT_AUDIENCE"),
                    leeway: Double(jwtLeeway)
                )
            } catch {
                throw CommandFailure("--jwt-keys \(keysPath): \(error)")
            }
        }
        service.maxStreamsPerClient = maxStreamsPerClient > 0 ? maxStreamsPerClient : nil
        service.publicFeeds = try PublicFeedsOption.patterns(publicFeeds)
        service.maxFeedMemory = maxFeedMemory
        service.maxWait = maxWait
        service.eventHeartbeat = eventHeartbeat
        return (service, keysPath)
    }

    /// The source `--source-database` and `--shapes` name, its shapes file read.
    private func feedSource(logger: Logger) throws -> PostgresSource? {
        guard let sourceDatabase, let shapes else { return nil }
        var settings = SourceSettings(conninfo: sourceDatabase, shapesPath: shapes)
        settings.slot = sourceSlot
        settings.publication = sourcePublication
        settings.idle = .seconds(sourceIdle)
        do {
            return try PostgresSource(settings: settings, logger: logger)
        } catch {
            throw CommandFailure("--shapes: \(error)")
        }
    }

    /// The store `--store` names.
    private func feedStore(logger: Logger) throws -> any FeedStore {
        do throws(FeedError) {
            if let sqlitePath {
                return try SQLiteFeedStore(path: sqlitePath, maxVersions: maxVersions, maxBytes: maxFeedMemory)
            } else if isPostgres {
                return try PostgresFeedStore(conninfo: store, maxVersions: maxVersions, maxBytes: maxFeedMemory, logger: logger)
            } else {
                return MemoryFeedStore(maxVersions: maxVersions, maxBytes: maxFeedMemory)
            }
        } catch {
            guard case .internalFailure(let reason) = error else { throw CommandFailure("--store: \(error)") }
            throw CommandFailure("--store: \(reason)")
        }
    }

    /// The HTTP server's settings from the flags, its connections within what `openFiles`,
    /// the open-files limit, allows.
    private func httpConfiguration(openFiles: Int, logger: Logger) -> HTTPServerConfiguration {
        var http = HTTPServerConfiguration()
        http.host = address.host
        http.port = address.port
        http.bodyLimit = bodyLimit
        http.connectionLimit = maxConnections
        http.threads = threads
        // Connections past what the open-files limit allows would be refused at accept
        // without a word: the limit that holds is kept, and said.
        if openFiles < maxConnections + http.reservedOpenFiles {
            http.connectionLimit = max(1, openFiles - http.reservedOpenFiles)
            logger.warning("the open-files limit is \(openFiles) (its hard limit); --max-connections \(maxConnections) needs \(maxConnections + http.reservedOpenFiles): keeping \(http.connectionLimit) connections; raise the limit (ulimit -n, LimitNOFILE, docker --ulimit nofile) to have them all", metadata: [
                "open_files": "\(openFiles)", "max_connections": "\(maxConnections)", "connection_limit": "\(http.connectionLimit)",
            ])
        }
        http.connectionTimeout = connectionTimeout
        http.headerTimeout = headerTimeout
        http.bodyTimeout = bodyTimeout
        http.minSendRate = minSendRate
        http.probePaths = BatchDiffService.probePaths
        http.requestMemory = requestMemory
        http.memoryPerBodyByte = BatchDiffService.memoryPerBodyByte
        http.crossOrigin = CrossOrigin(origins: Set(corsOrigin.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }))
        return http
    }
}
