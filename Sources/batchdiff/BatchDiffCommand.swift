import ArgumentParser

@main
struct BatchDiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batchdiff",
        abstract: "Batch updates for UITableView and UICollectionView, computed on the server.",
        subcommands: [ServeCommand.self, DiffCommand.self, FollowCommand.self, HealthcheckCommand.self],
        defaultSubcommand: ServeCommand.self
    )

    /// Runs the command line, `--public-feeds` alone read as `--public-feeds=*`.
    static func main() async {
        await main(PublicFeedsOption.arguments(Array(CommandLine.arguments.dropFirst())))
    }
}
