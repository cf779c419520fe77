import CProcessSupport

/// Asks a server for a path and reports the status code: what a container's health check needs.
public enum HealthProbe {
    /// The status code of `GET path` on host:port, or `nil` without an answer in time.
    /// A wildcard host (`0.0.0.0`, `::`) is asked on loopback.
    public static func status(host: String, port: Int, path: String = "/healthz", timeoutSeconds: Int = 3) -> Int? {
        let target = switch host {
        case "0.0.0.0", "": "127.0.0.1"
        case "::", "[::]": "::1"
        default: host
        }
        let status = bd_http_get_status(target, UInt16(clamping: port), path, Int32(timeoutSeconds))
        return status < 0 ? nil : Int(status)
    }
}
