import BatchDiffJSON
import HTTPServer

extension BatchDiffService {
    /// Every route the service answers, each declared once (README: "Adding a route"). The
    /// table decides routing, 404 and 405 with `Allow`, tokens, the body's content type and
    /// the route's name in metrics.
    static let endpoints: [Endpoint] = [
        Endpoint(["GET", "HEAD"], "/healthz", access: .open, answer: .now { _, _, _ throws(Problem) in healthAnswer }),
        Endpoint(["GET", "HEAD"], "/readyz", access: .open, answer: .now { _, _, _ throws(Problem) in readyAnswer }),
        Endpoint(["GET", "HEAD"], "/metrics", access: .open, answer: .now { service, _, _ throws(Problem) in service.metricsAnswer() }),
        Endpoint(["POST"], "/diff", access: .read, body: .json, answer: .computed { service, request throws(Problem) in
            try service.diff(request)
        }),
        Endpoint(["GET", "HEAD"], "/feeds/?", access: .read, answer: .task { service, request, _ throws(Problem) in
            try await service.listFeeds(request)
        }),
        Endpoint(["GET", "HEAD"], "/feeds/{id}", access: .read, answer: .task { service, request, path throws(Problem) in
            try await service.getFeed(path["id"], request)
        }),
        Endpoint(["PUT"], "/feeds/{id}", access: .write, body: .json, answer: .task { service, request, path throws(Problem) in
            try await service.putFeed(path["id"], request)
        }),
        Endpoint(["DELETE"], "/feeds/{id}", access: .write, answer: .task { service, _, path throws(Problem) in
            try await service.deleteFeed(path["id"])
        }),
        Endpoint(["GET", "HEAD"], "/feeds/{id}/changes", access: .read, answer: .task { service, request, path throws(Problem) in
            try await service.changes(path["id"], request)
        }),
    ]

    /// The endpoint of a request and its path's parameters, checked from the request's
    /// head: a known path (404; the first pattern that matches is the route), a method it
    /// answers (405), the token it needs (401, 403), and for a body it reads, a JSON
    /// content type (415).
    func endpoint(of request: HTTPRequest) throws(Problem) -> (Endpoint, PathParameters) {
        guard let (route, parameters) = Self.endpoints.lazy.compactMap({ endpoint in endpoint.path.match(request.path).map { (endpoint.path.label, $0) } }).first else {
            throw Problem.notFound(request.path)
        }
        let routeEndpoints = Self.endpoints.filter { $0.path.label == route }
        guard let endpoint = routeEndpoints.first(where: { $0.methods.contains(request.method) }) else {
            throw Problem.methodNotAllowed(request.method, request.path, allowed: routeEndpoints.flatMap(\.methods))
        }
        switch endpoint.access {
        case .open: break
        case .read: try authorizeRead(request)
        case .write: try authorizeWrite(request)
        }
        if endpoint.body == .json { try Self.checkContentType(request) }
        return (endpoint, parameters)
    }

    /// The name of the route `path` belongs to, for metrics: its pattern, or `other`.
    static func routeLabel(of path: String) -> String {
        endpoints.first { $0.path.match(path) != nil }?.path.label ?? "other"
    }

    /// `GET /healthz`: the process serves (liveness: never about the store).
    private static let healthAnswer = statusAnswer("ok")

    /// `GET /readyz`: the server takes requests (readiness). While it shuts down, the
    /// server answers it 503 `shutting_down`, as every new request.
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
