// swift-tools-version:6.1
import PackageDescription

/// A product of one of the server's packages: resolved and linked only with the trait `Server`.
func serverPackage(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["Server"]))
}

let package = Package(
    name: "BatchDiff",
    platforms: [.macOS(.v15), .iOS(.v15)],
    products: [
        .library(name: "BatchDiff", targets: ["BatchDiff"]),
        .library(name: "BatchDiffJSON", targets: ["BatchDiffJSON"]),
        // The client side: answers, apply, the table adapter, the feed follower, and its
        // transports (URLSession in a module of its own: the server never links it).
        .library(name: "BatchDiffClient", targets: ["BatchDiffClient", "BatchDiffURLSession"]),
        .executable(name: "batchdiff", targets: ["batchdiff"]),
    ],
    // The server's packages are resolved only with the trait `Server` (on by default): an
    // app that depends on the client libraries alone, with `traits: []`, resolves none of them.
    traits: [
        .trait(name: "Server", description: "The batchdiff server, its stores and tokens, and the packages they need"),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // Signature checks of signed tokens (HMAC, Ed25519, P-256): never cryptography of our own.
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        // A heap, for evicting the oldest versions across many feeds.
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // The differ: batch types, matching, moves, apply. Knows nothing of JSON or HTTP.
        // Its generic entry points are @inlinable, so callers specialize them for their element
        // types without unsafe flags (which SwiftPM refuses in a versioned dependency).
        .target(name: "BatchDiff"),
        // Reading collections from JSON, fingerprints, writing batches.
        .target(name: "BatchDiffJSON", dependencies: ["BatchDiff"]),
        // The client library: the answers as Codable types, applying them, driving a table
        // view, following a feed over a transport of the app's choice. Knows no server code.
        .target(name: "BatchDiffClient", dependencies: ["BatchDiff", "Gzip"]),
        .target(name: "BatchDiffURLSession", dependencies: ["BatchDiffClient"]),
        // The feed core: feeds, versions, retention, answers kept, long polls, and the
        // store protocol with the in-memory store. Knows nothing of HTTP; records its
        // metrics through swift-metrics.
        .target(
            name: "BatchDiffFeeds",
            dependencies: [
                "BatchDiff", "BatchDiffJSON", "Gzip", serverPackage("Metrics", "swift-metrics"),
                serverPackage("HeapModule", "swift-collections"),
            ]
        ),
        // libmicrohttpd, plus a few lines of C for what Swift cannot call (variadics).
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .target(name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD"]),
        // SQLite, and the safe Swift layer over it (every unsafe pointer in Sources/SQLite).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        // Feeds in an SQLite file: a FeedStore for one server that survives restarts.
        .target(name: "BatchDiffSQLite", dependencies: ["BatchDiffFeeds", "BatchDiffJSON", "SQLite"]),
        // libpq, and the safe Swift layer over it: non-blocking calls with deadlines,
        // notifications (every unsafe pointer in Sources/PostgreSQL).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "PostgreSQL", dependencies: ["CLibPQ"]),
        // Feeds in PostgreSQL: a FeedStore shared by any number of servers.
        .target(
            name: "BatchDiffPostgres",
            dependencies: ["BatchDiffFeeds", "BatchDiffJSON", "PostgreSQL", serverPackage("Logging", "swift-log")]
        ),
        // Feeds that follow a PostgreSQL database through logical replication (pgoutput).
        .target(
            name: "BatchDiffSource",
            dependencies: [
                "BatchDiffFeeds", "BatchDiffJSON", "PostgreSQL", serverPackage("Logging", "swift-log"), serverPackage("Metrics", "swift-metrics"),
            ]
        ),
        // zlib, and gzip over it: responses compressed, request bodies inflated (every zlib
        // pointer in Sources/Gzip).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "Gzip", dependencies: ["CZlib"]),
        // What the server needs from glibc beyond the Glibc module: mallopt, POLLRDHUP.
        .systemLibrary(name: "CGlibcExtras"),
        // A safe Swift HTTP server over libmicrohttpd: plain requests and responses.
        .target(
            name: "HTTPServer",
            dependencies: ["CMicroHTTPDShim", "CGlibcExtras", "Gzip", serverPackage("Metrics", "swift-metrics")]
        ),
        // Signed tokens per feed: a JWK Set's keys, each pinned to its algorithm, and the
        // claims a token grants. Knows nothing of HTTP.
        .target(name: "BatchDiffTokens", dependencies: ["BatchDiffFeeds", "BatchDiffJSON", serverPackage("Crypto", "swift-crypto")]),
        // The endpoints: the endpoint table, tokens, problem documents, metrics on /metrics.
        .target(
            name: "BatchDiffEndpoints",
            dependencies: [
                "BatchDiff", "BatchDiffJSON", "BatchDiffFeeds", "BatchDiffTokens", "HTTPServer", "Gzip",
                serverPackage("Logging", "swift-log"),
                serverPackage("Metrics", "swift-metrics"),
                serverPackage("Prometheus", "swift-prometheus"),
            ],
            // The playground page and the JavaScript client it runs on (clients/js/batchdiff.js,
            // linked here) are compiled into the binary: the Docker image holds nothing else.
            resources: [.embedInCode("Playground/playground.html"), .embedInCode("Playground/batchdiff.js")]
        ),
        .executableTarget(
            name: "batchdiff",
            dependencies: [
                "BatchDiffEndpoints", "BatchDiffFeeds", "BatchDiffSQLite", "BatchDiffPostgres", "BatchDiffSource", "PostgreSQL", "BatchDiffJSON", "BatchDiff", "BatchDiffClient",
                "BatchDiffTokens",
                serverPackage("ArgumentParser", "swift-argument-parser"),
                serverPackage("Logging", "swift-log"),
                serverPackage("Metrics", "swift-metrics"),
                serverPackage("ServiceLifecycle", "swift-service-lifecycle"),
                serverPackage("UnixSignals", "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(name: "BatchDiffBenchmark", dependencies: ["BatchDiff", "BatchDiffJSON"]),
        // What the test targets share (a seeded random source, a manual clock, the rule checker).
        .target(name: "TestSupport", dependencies: ["BatchDiff"], path: "Tests/TestSupport"),
        .testTarget(name: "BatchDiffTests", dependencies: ["BatchDiff", "TestSupport"]),
        .testTarget(name: "BatchDiffFeedsTests", dependencies: ["BatchDiffFeeds", "BatchDiffJSON", "BatchDiff", "CGlibcExtras", "TestSupport"]),
        .testTarget(name: "GzipTests", dependencies: ["Gzip", "TestSupport"]),
        .testTarget(name: "BatchDiffTokensTests", dependencies: ["BatchDiffTokens", "TestSupport"]),
        .testTarget(name: "BatchDiffClientTests", dependencies: ["BatchDiffClient", "BatchDiff", "BatchDiffJSON", "TestSupport"]),
        .testTarget(name: "BatchDiffSQLiteTests", dependencies: ["BatchDiffSQLite", "BatchDiffFeeds", "BatchDiffJSON", "BatchDiff", "SQLite", "TestSupport"]),
        .testTarget(name: "BatchDiffSourceTests", dependencies: ["BatchDiffSource", "BatchDiffFeeds", "BatchDiffJSON", "TestSupport"]),
        .testTarget(name: "BatchDiffJSONTests", dependencies: ["BatchDiffJSON", "BatchDiff", "TestSupport"]),
        .testTarget(
            name: "BatchDiffServiceTests",
            dependencies: [
                "batchdiff", "BatchDiff", "BatchDiffJSON", "BatchDiffClient", "BatchDiffURLSession", "Gzip", "TestSupport",
                serverPackage("Crypto", "swift-crypto"),
            ]
        ),
    ]
)
