import BatchDiffClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``HTTPTransport`` over Foundation's `URLSession`, for apps. A request's timeout becomes
/// the `URLRequest`'s (URLSession's idle timeout; a follower's is above its long-poll
/// wait), and `URLSession` asks for and undoes gzip itself.
public struct URLSessionTransport: HTTPTransport {
    public let session: URLSession

    public init(session: URLSession = .shared) {
        self.session = session
    }

    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        guard let url = URL(string: request.url) else { throw TransportError("not a URL: \(request.url)", isRetryable: false) }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
        let (data, response) = try await session.data(for: urlRequest)
        guard let response = response as? HTTPURLResponse else { throw TransportError("not an HTTP response") }
        let headers = response.allHeaderFields.compactMap { name, value -> (name: String, value: String)? in
            guard let name = name as? String, let value = value as? String else { return nil }
            return (name, value)
        }
        return HTTPClientResponse(status: response.statusCode, headers: headers, body: Array(data))
    }
}
