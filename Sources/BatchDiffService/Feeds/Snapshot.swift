import BatchDiff
import BatchDiffJSON

/// A version of a feed, whole: its JSON text, the collection read from it and the
/// fingerprint of the text's canonical form (equal snapshots make no new version).
struct Snapshot: Sendable {
    private(set) var version: Int
    let bytes: [UInt8]
    let collection: JSONCollection
    let fingerprint: Fingerprint

    /// A snapshot read from a `PUT` body; 422 when it is not a collection.
    init(version: Int, document: JSONDocument, idKey: String) throws(Problem) {
        do {
            collection = try document.root.collection(idKey: idKey, path: "body")
        } catch {
            throw Problem.wrongShape(error)
        }
        self.version = version
        bytes = document.bytes
        fingerprint = document.root.fingerprint
    }

    /// Version 0 of a feed of the shape of `collection`: the empty collection.
    init(emptyLike collection: JSONCollection) {
        version = 0
        bytes = []
        fingerprint = Fingerprint(high: 0, low: 0)
        switch collection {
        case .list: self.collection = .list([])
        case .sectioned: self.collection = .sectioned([])
        }
    }

    /// The same content as a later version.
    func numbered(_ version: Int) -> Snapshot {
        var snapshot = self
        snapshot.version = version
        return snapshot
    }

    var byteEstimate: Int {
        switch collection {
        case .list(let items): bytes.count + items.count * 40
        case .sectioned(let sections): bytes.count + sections.reduce(0) { $0 + 48 + $1.items.count * 40 }
        }
    }
}
