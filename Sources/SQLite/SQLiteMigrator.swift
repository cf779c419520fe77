/// The steps that bring a database's schema to the version this program writes, each run
/// once, in order, in one write transaction (GRDB's `DatabaseMigrator`), with the version
/// kept in the file's header (`PRAGMA user_version`): a file of an earlier version is
/// brought forward when it is opened; one of a later version is left as it is, for the
/// caller to refuse.
public struct SQLiteMigrator: Sendable {
    /// One step: the schema version it brings a file to, and what it runs.
    public struct Step: Sendable {
        public let version: Int
        public let migrate: @Sendable (SQLiteConnection) throws(SQLiteError) -> Void

        public init(version: Int, migrate: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> Void) {
            self.version = version
            self.migrate = migrate
        }
    }

    /// What makes version 0's schema where it is missing; it must be safe to run again (a
    /// file of any version runs it).
    private let initial: @Sendable (SQLiteConnection) throws(SQLiteError) -> Void
    private let steps: [Step]

    /// A migrator from version 0, which `initial` makes, through `steps`, in increasing
    /// order of version.
    public init(initial: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> Void, steps: [Step]) {
        precondition(zip(steps, steps.dropFirst()).allSatisfy { $0.version < $1.version } && (steps.first?.version ?? 1) > 0)
        self.initial = initial
        self.steps = steps
    }

    /// The version the last step brings a file to.
    public var latestVersion: Int { steps.last?.version ?? 0 }

    /// Brings `connection`'s database forward, and returns the version it was of (a version
    /// above ``latestVersion`` is left as it is).
    public func migrate(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        try connection.writeTransaction { () throws(SQLiteError) -> Int in
            let found = try connection.integer("PRAGMA user_version")
            guard found <= latestVersion else { return found }
            try initial(connection)
            for step in steps where step.version > found {
                try step.migrate(connection)
                try connection.execute("PRAGMA user_version = \(step.version)")
            }
            return found
        }
    }
}
