import BatchDiffJSON

/// The settings a write names (`?idKey=`, `?uniqueIdentities=`, `?orderBy=`,
/// `?sectionOrderBy=`): those of a feed it creates; a feed that exists must have the ones
/// it names (what it does not name it keeps).
struct FeedSettingsRequest {
    var idKey: String?
    var uniqueIdentities: Bool?
    var order: (rows: SortOrder?, sections: SortOrder?) = (nil, nil)

    /// The settings of a feed the write creates.
    var newFeed: FeedSettings {
        FeedSettings(
            idKey: idKey ?? "id", uniqueIdentities: uniqueIdentities ?? false, order: CollectionOrder(rows: order.rows, sections: order.sections)
        )
    }

    /// Throws ``FeedError/invalidSnapshot(_:)`` when a setting named is not feed `id`'s.
    func check(against settings: FeedSettings, of id: FeedID) throws(FeedError) {
        if let idKey, idKey != settings.idKey {
            throw .invalidSnapshot("feed \(id) uses idKey \(settings.idKey.debugDescription); it cannot change to \(idKey.debugDescription)")
        }
        if let uniqueIdentities, uniqueIdentities != settings.uniqueIdentities {
            throw .invalidSnapshot("feed \(id) was created with uniqueIdentities=\(settings.uniqueIdentities); it cannot change to \(uniqueIdentities)")
        }
        for (name, asked, kept) in [("orderBy", order.rows, settings.order.rows), ("sectionOrderBy", order.sections, settings.order.sections)] {
            guard let asked, asked != kept else { continue }
            let current = kept.map { "\($0)".debugDescription } ?? "no \(name)"
            throw .invalidSnapshot("feed \(id) was created with \(current); it cannot change to \(name)=\(asked)")
        }
    }
}
