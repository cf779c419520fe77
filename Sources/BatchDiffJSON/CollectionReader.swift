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
        let itemsKey = Fingerprint.string("items")
        var headers: [JSONSectionHeader] = []
        var itemArrays: [Int] = []
        for (position, section) in sections.elements.enumerated() {
            let sectionPath = "\(path).sections[\(position)]"
            guard section.isObject else {
                throw CollectionShapeError(path: sectionPath, reason: "expected a section object with an \"items\" array, found \(section.kindName)")
            }
            var headerSum = Fingerprint(high: 0, low: 0)
            var headerCount = 0
            var items: JSONValue?
            var identity: Fingerprint?
            var identityMemberSeen = false
            for (key, value) in section.members {
                if key.fingerprint == itemsKey && items == nil {
                    items = value
                    continue
                }
                headerSum = headerSum &+ .member(key: key.fingerprint, value: value.fingerprint)
                headerCount += 1
                if key.fingerprint == idKey && !identityMemberSeen {
                    identityMemberSeen = true
                    if value.kind.canBeIdentity { identity = value.fingerprint }
                }
            }
            guard let items, items.isArray else {
                throw CollectionShapeError(path: "\(sectionPath).items", reason: "expected an array of items, found \(items?.kindName ?? "nothing")")
            }
            let content = Fingerprint.object(memberSum: headerSum, count: headerCount)
            headers.append(JSONSectionHeader(identity: identity ?? content, content: content, span: section.span))
            itemArrays.append(items.index)
        }
        let (items, rowCounts) = document.items(ofArrays: itemArrays, idKey: idKey)
        return .sectioned(JSONSections(headers: headers, items: items, rowCounts: rowCounts))
    }
}

extension JSONDocument {
    /// The items of the array at node `array`: the rows it was read into as the document was
    /// parsed, or straight off the tape.
    func items(ofArray array: Int, idKey: Fingerprint) -> JSONItems {
        if let extracted = nodes[array].extractedArray.map({ extractedArrays[$0] }) {
            let store = rowStores[extracted.store]
            return extracted.rows == 0..<store.count ? store : JSONItems(extracted.rows.lazy.map { store[$0] })
        }
        return nodes.withUnsafeBufferPointer { nodes in
            var items = JSONItems()
            items.reserveCapacity(Int(nodes[array].childCount))
            var child = array + 1
            for _ in 0..<nodes[array].childCount {
                items.append(JSONItem(node: child, of: nodes, idKey: idKey))
                child = Int(nodes[child].next)
            }
            return items
        }
    }

    /// The items of the arrays at nodes `arrays`, one after the other, and how many each
    /// has: the store they were read into as the document was parsed, when they fill it in
    /// order (a collection's sections' items), else gathered.
    func items(ofArrays arrays: [Int], idKey: Fingerprint) -> (items: JSONItems, counts: [Int]) {
        let extracted = arrays.compactMap { nodes[$0].extractedArray.map { extractedArrays[$0] } }
        if extracted.count == arrays.count, let store = extracted.first?.store,
           zip(extracted, extracted.dropFirst()).allSatisfy({ $0.store == $1.store && $0.rows.upperBound == $1.rows.lowerBound }),
           extracted[0].rows.lowerBound == 0, extracted[extracted.count - 1].rows.upperBound == rowStores[store].count {
            return (rowStores[store], extracted.map(\.rows.count))
        }
        var items = JSONItems()
        var counts: [Int] = []
        for array in arrays {
            let part = self.items(ofArray: array, idKey: idKey)
            for item in part { items.append(item) }
            counts.append(part.count)
        }
        return (items, counts)
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
