import BatchDiff

/// `GET /feeds/{id}/changes?since=N&format=steps` (docs/batch-format.md §7): the changes as
/// the steps an adapter of a flat list applies one after another (Android's
/// `RecyclerView.Adapter`, a sectioned feed's headers each one position before its rows), with
/// the new elements of inserted and changed positions and, with `changedMembers=true`, each
/// changed position's payload: the names of its members that changed.
public struct FeedSteps<Element> {
    public var feed: String
    /// The client's version; 0 is the empty collection.
    public var from: Int
    /// The latest version.
    public var to: Int
    /// The steps, or `nil` for a reload (more changes than `maxChanges`): show the collection
    /// afresh.
    public var steps: [FeedStep<Element>]?
    /// The flat list's length before the steps and after (a sectioned collection's sections
    /// and rows, each header one position).
    public var counts: (old: Int, new: Int)
}

/// One step of a ``FeedSteps`` answer; positions count in the list as it is when the step
/// is applied.
public enum FeedStep<Element> {
    /// `count` elements leave from position `at` on.
    case remove(at: Int, count: Int)
    /// The element at `from` is taken out and put back at `to`.
    case move(from: Int, to: Int)
    /// `values` arrive at position `at` on.
    case insert(at: Int, values: [Element])
    /// The elements from position `at` on keep their place but change content, to `values`;
    /// `payloads` (with `changedMembers=true`) names, for each, the members that changed
    /// (`nil` for an element that is not an object: rebind it all).
    case change(at: Int, values: [Element], payloads: [[String]?]?)
}

/// An adapter of a flat list that is told each step (Android's `RecyclerView.Adapter`
/// notifications, by the same names); its data is changed before each notification.
public protocol StepUpdatable {
    /// The positions the adapter shows now (`getItemCount()`).
    var itemCount: Int { get }
    func notifyItemRangeRemoved(_ positionStart: Int, _ itemCount: Int)
    func notifyItemMoved(_ fromPosition: Int, _ toPosition: Int)
    func notifyItemRangeInserted(_ positionStart: Int, _ itemCount: Int)
    /// `payloads`, one per position, are the changed members, as `DiffUtil.ItemCallback
    /// .getChangePayload` would give them (`nil`: none asked for, rebind the elements whole).
    func notifyItemRangeChanged(_ positionStart: Int, _ itemCount: Int, payloads: [[String]?]?)
    func notifyDataSetChanged()
}

extension FeedSteps {
    /// Tells `adapter` each step, after `apply` has made the adapter's list as the step
    /// leaves it (or, for a reload, `reload` has made it the latest collection). An adapter
    /// that does not show the count the steps start from (its list drifted from what the
    /// server diffed) is reloaded instead: the steps would land on the wrong positions.
    public func perform(on adapter: some StepUpdatable, apply: (FeedStep<Element>) -> Void, reload: () -> Void) {
        guard let steps, adapter.itemCount == counts.old else {
            reload()
            adapter.notifyDataSetChanged()
            return
        }
        for step in steps {
            apply(step)
            switch step {
            case .remove(let at, let count): adapter.notifyItemRangeRemoved(at, count)
            case .move(let from, let to): adapter.notifyItemMoved(from, to)
            case .insert(let at, let values): adapter.notifyItemRangeInserted(at, values.count)
            case .change(let at, let values, let payloads): adapter.notifyItemRangeChanged(at, values.count, payloads: payloads)
            }
        }
    }
}

extension FeedStep {
    /// `list` as this step leaves it; ``BatchError`` for a step whose positions are not in it.
    public func applied(to list: [Element]) throws(BatchError) -> [Element] {
        var list = list
        switch self {
        case .remove(let at, let count):
            guard at >= 0, count >= 0, at <= list.count - count else { throw BatchError("remove \(count) at \(at) of a list of \(list.count)") }
            list.removeSubrange(at..<at + count)
        case .move(let from, let to):
            guard list.indices.contains(from), list.indices.contains(to) else { throw BatchError("move \(from) to \(to) in a list of \(list.count)") }
            list.insert(list.remove(at: from), at: to)
        case .insert(let at, let values):
            guard (0...list.count).contains(at) else { throw BatchError("insert at \(at) of a list of \(list.count)") }
            list.insert(contentsOf: values, at: at)
        case .change(let at, let values, _):
            guard at >= 0, at <= list.count - values.count else { throw BatchError("change \(values.count) at \(at) of a list of \(list.count)") }
            list.replaceSubrange(at..<at + values.count, with: values)
        }
        return list
    }
}

extension FeedSteps: Sendable where Element: Sendable {}
extension FeedStep: Sendable where Element: Sendable {}
extension FeedStep: Equatable where Element: Equatable {}

extension FeedSteps: Decodable where Element: Decodable {
    private enum Keys: String, CodingKey {
        case feed, from, to, steps, reload, counts
    }

    private enum CountKeys: String, CodingKey {
        case old, new
    }

    public init(from decoder: any Decoder) throws {
        let answer = try decoder.container(keyedBy: Keys.self)
        feed = try answer.decode(String.self, forKey: .feed)
        from = try answer.decode(Int.self, forKey: .from)
        to = try answer.decode(Int.self, forKey: .to)
        steps = try answer.decodeIfPresent(Bool.self, forKey: .reload) == true ? nil : try answer.decode([FeedStep<Element>].self, forKey: .steps)
        // A list's counts are its lengths; a sectioned collection's, its sections' rows (the
        // flat list adds a header for each).
        let counts = try answer.nestedContainer(keyedBy: CountKeys.self, forKey: .counts)
        let flat = { (key: CountKeys) throws -> Int in
            if let count = try? counts.decode(Int.self, forKey: key) { return count }
            let sections = try counts.decode([Int].self, forKey: key)
            return sections.count + sections.reduce(0, +)
        }
        self.counts = (try flat(.old), try flat(.new))
    }
}

extension FeedStep: Decodable where Element: Decodable {
    private enum Keys: String, CodingKey {
        case op, at, count, from, to, values, changedMembers
    }

    public init(from decoder: any Decoder) throws {
        let step = try decoder.container(keyedBy: Keys.self)
        let op = try step.decode(String.self, forKey: .op)
        switch op {
        case "remove": self = .remove(at: try step.decode(Int.self, forKey: .at), count: try step.decode(Int.self, forKey: .count))
        case "move": self = .move(from: try step.decode(Int.self, forKey: .from), to: try step.decode(Int.self, forKey: .to))
        case "insert", "change":
            let (at, count) = (try step.decode(Int.self, forKey: .at), try step.decode(Int.self, forKey: .count))
            let values = try step.decode([Element].self, forKey: .values)
            let payloads = try step.decodeIfPresent([[String]?].self, forKey: .changedMembers)
            guard values.count == count, payloads.map({ $0.count == count }) ?? true else {
                throw DecodingError.dataCorruptedError(forKey: .values, in: step, debugDescription: "a step's values (and payloads) are one per position")
            }
            self = op == "insert" ? .insert(at: at, values: values) : .change(at: at, values: values, payloads: payloads)
        default:
            throw DecodingError.dataCorruptedError(forKey: .op, in: step, debugDescription: "an unknown step \(op)")
        }
    }
}
