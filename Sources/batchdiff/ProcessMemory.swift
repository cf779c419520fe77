import Foundation

/// The memory this process may use: its cgroup's limit when one is set (a container's
/// `--memory`), else the machine's.
enum ProcessMemory {
    static var available: Int {
        let machine = meminfoTotal ?? (8 << 30)
        return [cgroupV2Limit, cgroupV1Limit].compactMap { $0 }.filter { $0 < machine }.min() ?? machine
    }

    /// cgroup v2: `memory.max`, "max" when unlimited.
    private static var cgroupV2Limit: Int? {
        read("/sys/fs/cgroup/memory.max").flatMap { Int($0) }
    }

    /// cgroup v1: `memory.limit_in_bytes`, a huge number when unlimited.
    private static var cgroupV1Limit: Int? {
        read("/sys/fs/cgroup/memory/memory.limit_in_bytes").flatMap { Int($0) }
    }

    /// `MemTotal` of /proc/meminfo, in bytes.
    private static var meminfoTotal: Int? {
        guard let line = read("/proc/meminfo")?.split(separator: "\n").first(where: { $0.hasPrefix("MemTotal:") }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
    }

    private static func read(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
