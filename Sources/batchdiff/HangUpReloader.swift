import BatchDiffSource
import BatchDiffTokens
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// Reads the server's files again on each `SIGHUP`, so that they change without a restart:
/// the JWK Set of `--jwt-keys` (keys rotate) and the shapes file of `--shapes`. A file that
/// does not read, or shapes that cannot be served, leave what is in force, and the log says
/// why. With neither file, a `SIGHUP` is logged and changes nothing (it never ends the
/// process).
struct HangUpReloader: Service {
    /// The file and the keyring read from it, when the server has keys.
    let keys: (path: String, keyring: TokenKeyring)?
    /// The feeds that follow a database, when the server has them.
    let source: PostgresSource?
    /// The signals, trapped before the server starts, so that none is missed.
    let hangUps: UnixSignalsSequence
    let logger: Logger

    func run() async throws {
        for await _ in hangUps.cancelOnGracefulShutdown() {
            if keys == nil && source == nil { logger.notice("SIGHUP: no --jwt-keys or --shapes to read again") }
            if let (path, keyring) = keys {
                do {
                    try keyring.reload(json: try Self.read(path))
                    logger.notice("token keys read again", metadata: ["path": "\(path)"])
                } catch {
                    logger.error("token keys not read again; the keys in force stay", metadata: ["path": "\(path)", "reason": "\(error)"])
                }
            }
            if let source {
                do throws(ShapeError) {
                    let served = try await source.reloadShapes()
                    logger.notice("shapes read again", metadata: ["shapes": "\(served)"])
                } catch {
                    logger.error("shapes not read again; the shapes in force stay", metadata: ["reason": "\(error)"])
                }
            }
        }
    }

    /// The bytes of the file at `path`.
    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("cannot read \(path)") }
        return Array(data)
    }
}
