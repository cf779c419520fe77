import BatchDiffTokens
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// Reads the JWK Set of `--jwt-keys` again on each `SIGHUP`, so that keys rotate without a
/// restart; a set that does not read leaves the keys in force, and says why in the log.
/// Without keys, a `SIGHUP` is logged and changes nothing (it never ends the process).
struct TokenKeyReloader: Service {
    /// The file and the keyring read from it, when the server has keys.
    let keys: (path: String, keyring: TokenKeyring)?
    /// The signals, trapped before the server starts, so that none is missed.
    let hangUps: UnixSignalsSequence
    let logger: Logger

    func run() async throws {
        for await _ in hangUps.cancelOnGracefulShutdown() {
            guard let (path, keyring) = keys else {
                logger.notice("SIGHUP: no --jwt-keys to read again")
                continue
            }
            do {
                try keyring.reload(json: try Self.read(path))
                logger.notice("token keys read again", metadata: ["path": "\(path)"])
            } catch {
                logger.error("token keys not read again; the keys in force stay", metadata: ["path": "\(path)", "reason": "\(error)"])
            }
        }
    }

    /// The bytes of the file at `path`.
    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("cannot read \(path)") }
        return Array(data)
    }
}
