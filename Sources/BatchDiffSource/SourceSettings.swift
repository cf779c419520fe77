/// How the server follows its source database (`serve --source-*`, docs/sources.md §1).
package struct SourceSettings: Sendable {
    /// The database, a libpq URI or keyword string.
    package var conninfo: String
    /// The shapes file.
    package var shapesPath: String
    /// The replication slot's name.
    package var slot = "batchdiff"
    /// The publication's name.
    package var publication = "batchdiff"
    /// A made feed nobody read for this long is dropped.
    package var idle = Duration.seconds(3600)

    package init(conninfo: String, shapesPath: String) {
        self.conninfo = conninfo
        self.shapesPath = shapesPath
    }
}
