import Foundation
import Glibc

/// A throwaway PostgreSQL cluster for one test: `initdb` and `pg_ctl` from Debian's
/// `postgresql` package (`make deps-test`), in a temporary directory, on a free port of
/// 127.0.0.1 (its socket in that directory), never the cluster Debian may have made on
/// 5432. PostgreSQL refuses to run as root, so as root it runs as the `postgres` user.
/// It runs with `wal_level=logical`, so that servers may follow it (docs/sources.md).
/// Stopped (`-m immediate`) and removed when dropped.
final class PostgresCluster {
    let directory: URL
    let port: UInt16
    private var data: String { directory.appendingPathComponent("data").path }

    /// The store URI of the cluster's `postgres` database.
    var uri: String { "postgres://postgres@127.0.0.1:\(port)/postgres" }

    /// A new cluster, started.
    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("batchdiff-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else { throw ServerError("no postgres user: run make deps-test") }
            chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        port = try freeLoopbackPort()
        try Self.run("initdb", ["-D", data, "--auth=trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
        try start()
    }

    deinit {
        thaw()
        _ = try? Self.run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts the cluster and waits until it takes connections.
    func start() throws {
        let options = "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100 -c wal_level=logical"
        try Self.run("pg_ctl", ["-D", data, "-w", "-t", "30", "-l", directory.appendingPathComponent("log").path, "-o", options, "start"])
    }

    /// Stops the cluster (fast: sessions are ended, transactions in flight rolled back).
    func stop() throws {
        try Self.run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
    }

    /// Freezes every process of the cluster (`SIGSTOP`): it takes connections into the
    /// kernel's backlog and answers nothing, as a hung database does.
    func freeze() {
        // The postmaster first, so that it forks no backend after its children are listed.
        guard let postmaster = processes.first else { return }
        kill(postmaster, SIGSTOP)
        for pid in processes.dropFirst() { kill(pid, SIGSTOP) }
    }

    /// Lets a frozen cluster run again (`SIGCONT`).
    func thaw() {
        for pid in processes { kill(pid, SIGCONT) }
    }

    /// The postmaster and its children.
    private var processes: [pid_t] {
        guard let pidFile = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8),
              let postmaster = pidFile.split(separator: "\n").first.flatMap({ pid_t($0) }) else { return [] }
        let children = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // After "(comm)": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == postmaster ? pid : nil
        }
        return [postmaster] + children
    }

    /// The rows `sql` selects from the `postgres` database, as psql prints them unaligned
    /// (`|` between columns, a line a row).
    func query(_ sql: String) throws -> String {
        try Self.run("psql", ["-h", directory.path, "-p", String(port), "-U", "postgres", "-d", "postgres", "-tAc", sql])
    }

    /// Starts `sql` in a psql of its own, on a thread of its own; the semaphore is
    /// signalled when it ended (however it ended).
    func startQuery(_ sql: String) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let arguments = ["-h", directory.path, "-p", String(port), "-U", "postgres", "-d", "postgres", "-tAc", sql]
        Thread {
            _ = try? Self.run("psql", arguments)
            done.signal()
        }.start()
        return done
    }

    /// Runs the PostgreSQL program `name` (as `postgres` when this is root) from `/`, a
    /// folder every user may enter (the clone may lie where `postgres` may not), and
    /// returns its standard output alone; throws with its standard error when it fails.
    @discardableResult
    private static func run(_ name: String, _ arguments: [String]) throws -> String {
        guard let bin = try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql").sorted().last else {
            throw ServerError("PostgreSQL is not installed in /usr/lib/postgresql: run make deps-test")
        }
        let program = "/usr/lib/postgresql/\(bin)/bin/\(name)"
        let user = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
        // Spawned directly, not with Foundation's Process (which learns of its child's exit
        // from a descriptor the child inherits: the server pg_ctl starts would keep it open),
        // through bash, which closes every descriptor of this process but the output files,
        // so the server holds none of the test's pipes either.
        let closeInherited = "cd / || exit 1; fd=3; while [ $fd -lt 1024 ]; do eval \"exec $fd>&-\"; fd=$((fd+1)); done; exec \"$@\""
        let command = ["/bin/bash", "-c", closeInherited, "bash"] + user + [program] + arguments
        let output = NSTemporaryDirectory() + "batchdiff-pg-\(UUID().uuidString.prefix(8))"
        defer { unlink(output + ".out"); unlink(output + ".err") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, output + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, command[0], &actions, nil, &arguments, environ)
        guard spawned == 0 else { throw ServerError("cannot run \(name): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let printed = (try? String(contentsOfFile: output + ".out", encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        guard status == 0 else { throw ServerError("\(name) failed (status \(status)): \(errors)\(printed)") }
        return printed
    }
}

/// A port of 127.0.0.1 that nothing listens on now.
func freeLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw ServerError("no free port: errno \(errno)") }
    return UInt16(bigEndian: address.sin_port)
}
