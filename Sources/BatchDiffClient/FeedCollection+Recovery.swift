import BatchDiff

extension FeedCollection {
    /// The batch that takes this collection, the one a client shows, to `new`, the feed's
    /// latest fetched whole (after a 410, or an answer that did not fit): what a follower
    /// animates instead of `reloadData()`, diffed on the phone by the differ the server uses.
    ///
    /// Rows are paired by `identity`; sections by their headers' identities (a ``JSON``
    /// header's `idKey` member, else the whole header; an `Identifiable` header's `id`; a
    /// `Hashable` header itself). Content is compared as the items compare (`==`, which
    /// for ``JSON`` items is JSON's equality); items that are not `Equatable` count as
    /// changed wherever they stay, so the batch reconfigures them. `nil` when the shapes
    /// differ, or a sectioned collection's headers have no identity: then only a reload will do.
    func recoveryBatch<Identity: Hashable>(to new: FeedCollection, identity: (Item) -> Identity, idKey: String) -> BatchUpdate? {
        let held = { (item: Item) in HeldElement(value: item, identity: AnyHashable(identity(item))) }
        switch (self, new) {
        case (.list(let old), .list(let new)):
            return .list(batch(from: old.map(held), to: new.map(held)))
        case (.sectioned(let old), .sectioned(let new)):
            guard let old = Self.paired(old, rows: held, idKey: idKey), let new = Self.paired(new, rows: held, idKey: idKey) else { return nil }
            return .sectioned(batch(from: old, to: new))
        default:
            return nil
        }
    }

    /// `sections` as the differ pairs them: headers by ``sectionIdentity(of:idKey:)`` (`nil` when
    /// one has none), rows as `rows` makes them.
    private static func paired(
        _ sections: [Section<Header, Item>], rows: (Item) -> HeldElement<Item>, idKey: String
    ) -> [Section<HeldElement<Header>, HeldElement<Item>>]? {
        var paired: [Section<HeldElement<Header>, HeldElement<Item>>] = []
        for section in sections {
            guard let identity = sectionIdentity(of: section.header, idKey: idKey) else { return nil }
            paired.append(Section(header: HeldElement(value: section.header, identity: identity), items: section.items.map(rows)))
        }
        return paired
    }

    /// What pairs a section across versions, from its header: a ``JSON`` header's `idKey`
    /// member (else the whole header), an `Identifiable` header's `id`, a `Hashable` header
    /// itself; `nil` for other headers.
    static func sectionIdentity(of header: Header, idKey: String) -> AnyHashable? {
        if let json = header as? JSON { return AnyHashable(json.identity(idKey: idKey)) }
        if let identifiable = header as? any Identifiable { return identity(of: identifiable) }
        if let hashable = header as? any Hashable { return AnyHashable(hashable) }
        return nil
    }
}

/// `value`'s `id`.
private func identity(of value: some Identifiable) -> AnyHashable {
    AnyHashable(value.id)
}

/// A row or a section header as the differ pairs them on the phone: its identity, and its
/// content compared as its type compares (not `Equatable`: always changed).
private struct HeldElement<Value>: Diffable {
    let value: Value
    let identity: AnyHashable

    func isContentEqual(to other: HeldElement<Value>) -> Bool {
        guard let value = value as? any Equatable else { return false }
        return value.isEqual(to: other.value)
    }
}

extension Equatable {
    /// Whether `other` is of this type and equal to this value.
    fileprivate func isEqual(to other: Any) -> Bool {
        (other as? Self) == self
    }
}
