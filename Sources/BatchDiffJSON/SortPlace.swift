/// Where an element stands in a collection sorted by an order (docs/feeds.md §14): by its
/// keys' values first, then by its identity (the identity member's value when it is a string
/// or a number; else the whole value, after every such identity, by its text), then by its
/// text's bytes. A total order, the same in every process: a `PUT` sorts by it and a `PATCH`
/// places by it, so the two agree.
public struct SortPlace: Sendable {
    var keys: [SortKey]
    /// The identity member's value; `nil` when the identity is the whole value.
    var identity: SortKey?
    /// The element's compact text.
    var text: ArraySlice<UInt8>

    /// Reads the places of elements of a collection sorted by one order, whose identity
    /// member is one name: the keys and the identity in one pass over each element's text.
    public struct Reader: Sendable {
        /// The order places are compared in.
        public let order: SortOrder
        /// The order's key names, then the identity member's (when no key has its name).
        private let names: [[UInt8]]
        private let identityIndex: Int

        /// A reader of places in `order` among elements whose identity member is `idKey`.
        public init(order: SortOrder, idKey: String) {
            self.order = order
            let identity = Array(idKey.utf8)
            let keyNames = order.keys.map(\.name)
            if let index = keyNames.firstIndex(of: identity) {
                names = keyNames
                identityIndex = index
            } else {
                names = keyNames + [identity]
                identityIndex = keyNames.count
            }
        }

        /// The place of the element whose compact JSON text is `text` (a row, or a section's
        /// header: an object whose `items` are left out or empty); a key holding an array or
        /// an object is ``SortKeyError``.
        public func place(of text: ArraySlice<UInt8>) throws(SortKeyError) -> SortPlace {
            var place = SortPlace(keys: [], identity: nil, text: text)
            var scanned: [ArraySlice<UInt8>?] = []
            try read(text, into: &place, scanned: &scanned)
            return place
        }

        /// ``place(of:)`` written into `place`, the members' texts into `scanned`: the room of
        /// both kept from one element to the next, so reading a collection's places one after
        /// another allocates nothing.
        func read(_ text: ArraySlice<UInt8>, into place: inout SortPlace, scanned: inout [ArraySlice<UInt8>?]) throws(SortKeyError) {
            JSONMemberScanner.scan(names, in: text, into: &scanned)
            try order.keys(scanned: scanned, into: &place.keys)
            place.identity = scanned[identityIndex].flatMap(SortKey.init(text:)).flatMap { key -> SortKey? in
                switch key {
                case .integer, .number, .string: key
                case .null, .false, .true: nil
                }
            }
            place.text = text
        }

        /// Negative when `left` comes first, zero when they tie (the same keys, identity and
        /// text), positive when `right` does.
        public func compare(_ left: SortPlace, _ right: SortPlace) -> Int {
            let byKeys = order.compare(left.keys, right.keys)
            if byKeys != 0 { return byKeys }
            switch (left.identity, right.identity) {
            case (let leftIdentity?, let rightIdentity?):
                let byIdentity = SortKey.compare(leftIdentity, rightIdentity)
                if byIdentity != 0 { return byIdentity }
            case (.some, nil): return -1
            case (nil, .some): return 1
            case (nil, nil): break
            }
            return left.text.elementsEqual(right.text) ? 0 : left.text.lexicographicallyPrecedes(right.text) ? -1 : 1
        }
    }
}
