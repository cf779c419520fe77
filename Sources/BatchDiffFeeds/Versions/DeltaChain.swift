/// How a durable store keeps a feed's versions in room proportional to what changed
/// (docs/feeds.md §11): each as its change from the version before (a ``TextDelta``'s
/// bytes), or whole when ``ChangeChain/durable`` says so; a version is read back from the
/// last whole one at or before it and the changes after that.
package enum DeltaChain {
    /// What a store keeps of one version: its text whole, or its change from the one before.
    package struct Link: Sendable {
        /// Whether `body` is a change (an encoded ``TextDelta``) rather than a whole text.
        package var isChange: Bool
        /// The whole text, or the change.
        package var body: [UInt8]

        /// A link of `body`, a change when `isChange`.
        package init(isChange: Bool, body: [UInt8]) {
            self.isChange = isChange
            self.body = body
        }
    }

    /// The change of `version` from the version before it, encoded, when the write knows
    /// that version (`nil` for a feed's first version): work for a worker, before the store
    /// decides (``link(for:change:chainBytes:)``).
    package static func change(of version: NewVersion) -> [UInt8]? {
        version.forwardDelta()?.encoded
    }

    /// What to keep of `version`, whose encoded `change` is known or not, after
    /// `chainBytes` bytes of changes since the feed's last whole version; and the chain's
    /// length after it (0 once a whole text is kept).
    package static func link(for version: NewVersion, change: [UInt8]?, chainBytes: Int) -> (link: Link, chainBytes: Int) {
        guard let change, ChangeChain.durable.keepsChange(chainBytes: chainBytes + change.count, textCount: version.snapshot.textCount) else {
            return (Link(isChange: false, body: version.snapshot.bytes), 0)
        }
        return (Link(isChange: true, body: change), chainBytes + change.count)
    }

    /// The text of the last of `links`, read in version order from a whole text (or from
    /// `start`, the text of the version before the first link, when that is a change).
    package static func text(of links: [Link], from start: [UInt8]? = nil) throws(FeedError) -> [UInt8] {
        let whole = links.lastIndex { !$0.isChange }
        guard let base = whole.map({ links[$0].body }) ?? start else {
            throw .internalFailure("a version's changes without the whole text they start from")
        }
        do {
            let changes = try links[(whole.map { $0 + 1 } ?? 0)...].map { link throws(TextDeltaError) in try TextDelta(encoded: link.body) }
            return try TextDelta.text(applying: changes, to: base)
        } catch {
            throw .internalFailure("a version's kept changes do not apply: \(error)")
        }
    }
}
