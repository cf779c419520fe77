/// One version of a followed feed.
public struct FeedUpdate<Header, Item> {
    /// The version.
    public var version: Int
    /// The whole collection at that version.
    public var collection: FeedCollection<Header, Item>
    /// What turns the collection shown before into this one: the batch to animate (from
    /// the empty collection, for the first update from nothing; diffed on the device after
    /// a refetch, a 410 or a mismatch), or a reload (more changes than `maxChanges`).
    public var update: BatchUpdate
    /// With ``FollowerConfiguration/changedMembers``, the members that changed in each row
    /// the batch reloads (and section header it updates).
    public var changedMembers: ChangedMemberNames?
    /// Following a window (``FollowerConfiguration/window``): the rows of the whole
    /// collection at this version (`collection` holds the window's).
    public var total: Int?

    public init(version: Int, collection: FeedCollection<Header, Item>, update: BatchUpdate, changedMembers: ChangedMemberNames? = nil, total: Int? = nil) {
        self.version = version
        self.collection = collection
        self.update = update
        self.changedMembers = changedMembers
        self.total = total
    }
}

extension FeedUpdate: Sendable where Header: Sendable, Item: Sendable {}
