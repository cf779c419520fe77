import BatchDiffJSON
import HTTPServer

extension BatchDiffService {
    /// Every route the service answers, each declared once (README: "Adding a route"). The
    /// table decides routing, 404 and 405 with `Allow`, tokens, the body's content type and
    /// the route's name in metrics.
    static let endpoints: [Endpoint] = [
        Endpoint(["GET", "HEAD"], "/", access: .open, answer: .now { _, _, _ throws(Problem) in Playground.page }),
        Endpoint(["GET", "HEAD"], "/batchdiff.js", access: .open, answer: .now { _, _, _ throws(Problem) in Playground.clientModule }),
        Endpoint(["GET", "HEAD"], "/healthz", access: .open, answer: .now { _, _, _ throws(Problem) in healthAnswer }),
        Endpoint(["GET", "HEAD"], "/readyz", access: .open, answer: .now { service, _, _ throws(Problem) in
            guard service.feeds.isStoreAvailable else { throw Problem.storeUnavailable("it did not answer the last check") }
            if let source = service.configuration.source, !source.isAvailable { throw Problem.sourceUnavailable("the replication stream is down") }
            return readyAnswer
        }),
        Endpoint(["GET", "HEAD"], "/metrics", access: .open, answer: .now { service, _, _ throws(Problem) in service.metricsAnswer() }),
        Endpoint(["POST"], "/diff", access: .read, body: .json, answer: .computed { service, request throws(Problem) in
            try service.diff(request)
        }),
        Endpoint(["GET", "HEAD"], "/feeds/?", access: .read, answer: .task { service, request, admitted throws(Problem) in
            try await service.listFeeds(request, admitted.credentials)
        }),
        Endpoint(["GET", "HEAD"], "/feeds/{id}", access: .read, answer: .task { service, request, path throws(Problem) in
            try await service.getFeed(path["id"], request)
        }),
        Endpoint(["PUT"], "/feeds/{id}", access: .write, body: .json, answer: .task { service, request, path throws(Problem) in
            try await service.putFeed(path["id"], request)
        }),
        Endpoint(["PATCH"], "/feeds/{id}", access: .write, body: .ops, answer: .task { service, request, path throws(Problem) in
            try await service.patchFeed(path["id"], request)
        }),
        Endpoint(["DELETE"], "/feeds/{id}", access: .write, answer: .task { service, _, path throws(Problem) in
            try await service.deleteFeed(path["id"])
        }),
        Endpoint(["GET", "HEAD"], "/feeds/{id}/changes", access: .read, answer: .taskOrEvents(
            task: { service, request, path throws(Problem) in try await service.changes(path["id"], request, path.credentials) },
            events: { service, request, path, pending in
                await service.changeEvents(path["id"], request, path.credentials, answeringThrough: pending)
            }
        )),
    ]

    /// The endpoint of a request and its path's parameters, checked from the request's
    /// head: a known path (404; the first pattern that matches is the route), a method it
    /// answers (405), the token it needs (401, 403), and for a body it reads, a JSON
    /// content type (415).
    /// `found` is the request path's route (``route(of:)``).
    func endpoint(of request: HTTPRequest, _ found: (route: Route, parameters: PathParameters)?) throws(Problem) -> (Endpoint, Admitted) {
        guard let (route, parameters) = found else { throw Self.unrouted(request.path) }
        guard let endpoint = route.endpoints.first(where: { $0.methods.contains(request.method) }) else {
            throw Problem.methodNotAllowed(request.method, request.path, allowed: route.allowed)
        }
        let credentials = endpoint.access == .open ? Credentials() : try authorize(request, endpoint.access, feed: parameters[ifPresent: "id"])
        switch endpoint.body {
        case .none: break
        case .json: try Self.checkContentType(request)
        case .ops: try Self.checkOpsContentType(request)
        }
        return (endpoint, Admitted(parameters: parameters, credentials: credentials))
    }

    /// The problem of a path no route matches: under `/feeds/`, a feed id with a `/` in it
    /// (`/feeds/team/news`, or `/feeds/a%2Fb` decoded) is an invalid feed id; else 404.
    private static func unrouted(_ path: String) -> Problem {
        let feedsPrefix = "/feeds/"
        guard path.hasPrefix(feedsPrefix) else { return Problem.notFound(path) }
        var name = path.dropFirst(feedsPrefix.count)
        if name.hasSuffix("/changes") { name = name.dropLast("/changes".count) }
        return Problem.invalidFeedID(String(name))
    }

    /// The name of the route `path` belongs to, for metrics: its pattern, or `other`.
    static func routeLabel(of path: String) -> String {
        route(of: path)?.route.path.label ?? "other"
    }

    /// The endpoints of one path pattern, and the methods they answer together (for `Allow`);
    /// a class, so that finding a request's route copies no arrays.
    final class Route: Sendable {
        let path: PathPattern
        let endpoints: [Endpoint]
        /// The methods the route answers, `OPTIONS` included (for `Allow`).
        let allowed: [String]
        /// The answer to `OPTIONS` (``options(allowing:)``).
        let options: HTTPResponse

        init(path: PathPattern, endpoints: [Endpoint]) {
            self.path = path
            self.endpoints = endpoints
            allowed = endpoints.flatMap(\.methods) + ["OPTIONS"]
            options = BatchDiffService.options(allowing: allowed)
        }
    }

    /// The endpoint table grouped by path pattern, in the table's order; every route also
    /// answers `OPTIONS` (``options(of:)``).
    private static let routes: [Route] = endpoints.reduce(into: [Route]()) { routes, endpoint in
        if let index = routes.firstIndex(where: { $0.path.label == endpoint.path.label }) {
            routes[index] = Route(path: routes[index].path, endpoints: routes[index].endpoints + [endpoint])
        } else {
            routes.append(Route(path: endpoint.path, endpoints: [endpoint]))
        }
    }

    /// `OPTIONS` on a route that answers `allowed`: what it allows (`Allow`), and for a
    /// browser's CORS preflight the methods and request headers a page may use (the server
    /// adds the origin when it is allowed, `--cors-origin`).
    static func options(allowing allowed: [String]) -> HTTPResponse {
        let methods = allowed.joined(separator: ", ")
        return HTTPResponse(status: 204, headers: [
            ("Allow", methods), ("Access-Control-Allow-Methods", methods),
            ("Access-Control-Allow-Headers", "Authorization, Content-Type, Content-Encoding, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID"),
            ("Access-Control-Max-Age", "600"),
        ])
    }

    /// The route of `path` (the first pattern that matches) and the path's parameters.
    static func route(of path: String) -> (route: Route, parameters: PathParameters)? {
        for route in routes {
            if let parameters = route.path.match(path) { return (route, parameters) }
        }
        return nil
    }

    /// The health checks' paths, answered even when every connection slot is taken
    /// (``HTTPServerConfiguration/probePaths``).
    package static let probePaths: Set<String> = ["/healthz", "/readyz"]

    /// `GET /healthz`: the process serves (liveness: never about the store).
    private static let healthAnswer = statusAnswer("ok")

    /// `GET /readyz`: the server takes requests (readiness): 503 `store_unavailable` while
    /// its store cannot be reached; while it shuts down, 503 `shutting_down`, as every new
    /// request.
    private static let readyAnswer = statusAnswer("ready")

    private static func statusAnswer(_ status: String) -> HTTPResponse {
        var output = JSONOutput()
        output.object { output in
            output.key("status")
            output.string(status)
        }
        return .json(200, output.bytes)
    }
}
