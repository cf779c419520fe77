import ArgumentParser
import BatchDiff
import BatchDiffJSON
import Foundation

/// `batchdiff diff OLD.json NEW.json`: prints the batch between two collection files.
struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Print the batch update that turns the collection in OLD into the one in NEW."
    )

    @Argument(help: "The old collection, a JSON file ('-' reads standard input).")
    var old: String

    @Argument(help: "The new collection, a JSON file ('-' reads standard input).")
    var new: String

    @Option(name: .customLong("id-key"), help: "The member that holds an item's identity.")
    var idKey = "id"

    @Flag(name: .customLong("no-moves"), help: "Send every move as a delete plus an insert.")
    var noMoves = false

    func validate() throws {
        if old == "-" && new == "-" { throw ValidationError("only one of OLD and NEW can be '-'") }
    }

    func run() throws {
        let oldCollection = try read(old, as: "old")
        let newCollection = try read(new, as: "new")
        do {
            let batch = try JSONBatch(from: oldCollection, to: newCollection, options: DiffOptions(allowsMoves: !noMoves))
            var output = JSONOutput()
            try output.batch(batch)
            output.newline()
            FileHandle.standardOutput.write(Data(output.bytes))
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    private func read(_ path: String, as name: String) throws -> JSONCollection {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let file = FileHandle(forReadingAtPath: path), let contents = try? file.readToEnd() else {
                throw CommandFailure("\(name): cannot read \(path)")
            }
            data = contents
        }
        do {
            return try JSONDocument(bytes: [UInt8](data), collections: .root, idKey: idKey).root.collection(idKey: idKey, path: name)
        } catch {
            throw CommandFailure("\(name) (\(path)): \(error)")
        }
    }
}

/// An error the command prints as it is, exiting non-zero.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
