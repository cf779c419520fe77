import BatchDiff

extension JSONValue {
    /// Reads this value as a collection (docs/batch-format.md §1): a list, or an object
    /// with a `sections` array. Items and sections take their identity from the member
    /// named `idKey` when they have one holding a string or a number, else from their
    /// whole value.
    ///
    /// `path` names this value in errors, e.g. `old`.
    public func collection(idKey: String, path: String) throws(CollectionShapeError) -> JSONCollection {
        let idKey = Fingerprint.string(idKey)
        precondition(document.extractionIdKey.map { $0 == idKey } ?? true, "a document's collections are read with the idKey they were parsed with")
        if isArray { return .list(document.items(ofArray: index, idKey: idKey)) }
        guard isObject, let sections = member(withKey: Fingerprint.string("sections")) else {
            throw CollectionShapeError(path: path, reason: "expected a collection: an array of items or an object with a \"sections\" array, found \(kindName)")
        }
        guard sections.isArray else {
            throw CollectionShapeError(path: "\(path).sections", reason: "expected an array of sections, found \(sections.kindName)")
        }
        var headers: [JSONSectionHeader] = []
        var itemArrays: [Int] = []
        for (position, section) in sections.elements.enumerated() {
            let sectionPath = "\(path).sections[\(position)]"
            guard section.isObject else {
                throw CollectionShapeError(path: sectionPath, reason: "expected a section object with an \"items\" array, found \(section.kindName)")
            }
            guard let items = section.member(withKey: Self.itemsKey), items.isArray else {
                throw CollectionShapeError(path: "\(sectionPath).items", reason: "expected an array of items, found \(section.member(withKey: Self.itemsKey)?.kindName ?? "nothing")")
            }
            let content = section.headerContent
            headers.append(JSONSectionHeader(identity: section.identityMember(idKey) ?? content, content: content, span: section.span))
            itemArrays.append(items.index)
        }
        let (items, rowCounts) = document.items(ofArrays: itemArrays, idKey: idKey)
        return .sectioned(JSONSections(headers: headers, items: items, rowCounts: rowCounts))
    }
}

extension JSONValue {
    static let itemsKey = Fingerprint.string("items")

    /// Whether this value can be an identity: a string or a number.
    public var canBeIdentity: Bool { kind.canBeIdentity }

    /// This value's identity as an item of a collection whose identity member is `idKey`
    /// (docs/batch-format.md §1.2): the member's value when it holds a string or a number,
    /// else the whole value.
    public func itemIdentity(idKey: String) -> Fingerprint {
        identityMember(Fingerprint.string(idKey)) ?? fingerprint
    }

    /// This object's identity as a section of a collection whose identity member is
    /// `idKey`: the member's value when it holds a string or a number, else the header's
    /// content (every member but `items`).
    public func sectionIdentity(idKey: String) -> Fingerprint {
        identityMember(Fingerprint.string(idKey)) ?? headerContent
    }

    /// The value of the first member named `idKey` when it can be an identity (a string or
    /// a number).
    func identityMember(_ idKey: Fingerprint) -> Fingerprint? {
        guard let value = member(withKey: idKey), value.kind.canBeIdentity else { return nil }
        return value.fingerprint
    }

    /// The content of a section's header: every member but the first `items` (what a
    /// section's ``JSONSectionHeader`` holds as its content).
    public var headerContent: Fingerprint {
        var sum = Fingerprint(high: 0, low: 0)
        var count = 0
        var itemsSeen = false
        for (key, value) in members {
            if key.fingerprint == Self.itemsKey && !itemsSeen {
                itemsSeen = true
                continue
            }
            sum = sum &+ .member(key: key.fingerprint, value: value.fingerprint)
            count += 1
        }
        return Fingerprint.object(memberSum: sum, count: count)
    }
}

extension JSONDocument {
    /// The items of the array at node `array`: the store they were read into as the
    /// document was parsed (a list's store holds its items alone), or read off the tape.
    func items(ofArray array: Int, idKey: Fingerprint) -> JSONItems {
        if let extracted = nodes[array].extractedArray { return rowStores[extractedArrays[extracted].store] }
        return itemsOffTheTape(ofArrays: [array], idKey: idKey)
    }

    /// The items of the arrays at nodes `arrays`, a collection's sections' items, one after
    /// the other, and how many each has: the one store they were all read into as the
    /// document was parsed, or read off the tape.
    func items(ofArrays arrays: [Int], idKey: Fingerprint) -> (items: JSONItems, counts: [Int]) {
        let extracted = arrays.compactMap { nodes[$0].extractedArray.map { extractedArrays[$0] } }
        if let first = extracted.first { return (rowStores[first.store], extracted.map(\.rows.count)) }
        return (itemsOffTheTape(ofArrays: arrays, idKey: idKey), arrays.map { Int(nodes[$0].childCount) })
    }

    /// The items of the arrays at nodes `arrays`, one after the other, read off the tape.
    private func itemsOffTheTape(ofArrays arrays: [Int], idKey: Fingerprint) -> JSONItems {
        nodes.withUnsafeBufferPointer { nodes in
            var items = JSONItems()
            items.reserveCapacity(arrays.reduce(0) { $0 + Int(nodes[$1].childCount) })
            for array in arrays {
                var child = array + 1
                for _ in 0..<nodes[array].childCount {
                    items.append(JSONItem(node: child, of: nodes, idKey: idKey))
                    child = Int(nodes[child].next)
                }
            }
            return items
        }
    }
}

extension JSONItem {
    /// The item whose value is node `index` of `nodes` (docs/batch-format.md §1.2): its
    /// identity is the first member named `idKey` when that holds a string or a number.
    init(node index: Int, of nodes: UnsafeBufferPointer<JSONNode>, idKey: Fingerprint) {
        let node = nodes[index]
        var identity = node.fingerprint
        if node.kind == .object {
            var key = index + 1
            for _ in 0..<(node.childCount / 2) {
                if nodes[key].fingerprint == idKey {
                    if nodes[key + 1].kind.canBeIdentity { identity = nodes[key + 1].fingerprint }
                    break
                }
                key = Int(nodes[key + 1].next)
            }
        }
        self.init(identity: identity, content: node.fingerprint, span: Int(node.start)..<Int(node.end))
    }
}
