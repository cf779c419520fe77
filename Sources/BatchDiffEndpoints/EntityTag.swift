import BatchDiffFeeds

/// Entity tags, one scheme for every route that sends one (docs/feeds.md §2): a feed
/// version as `"<version>"` for an answer sent as it is and `"<version>-gzip"` for one sent
/// gzip-compressed. Both name the version, in `If-Match` as in `If-None-Match`, so the tag a
/// client was given works whatever encoding it was answered in. No tag is weak, and none
/// is made from a fingerprint: replicas behind a cache give the same tags.
enum EntityTag {
    /// The tag of `version`, sent as it is.
    static func of(version: Int) -> String { "\"\(version)\"" }

    /// The suffix of a tag whose answer is sent gzip-compressed.
    private static let gzipSuffix = "-gzip"

    /// `tag` for the same answer sent gzip-compressed: `"3"` becomes `"3-gzip"`. A tag of
    /// another form is kept.
    static func compressed(_ tag: String) -> String {
        guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\""), !tag.hasSuffix(gzipSuffix + "\"") else { return tag }
        return String(tag.dropLast()) + gzipSuffix + "\""
    }

    /// What an `If-Match` or `If-None-Match` header names: any version (`*`), or the
    /// versions of its tags. `weakMatches` is If-None-Match's weak comparison, where
    /// `W/"3"` names version 3; If-Match compares strongly and skips weak tags.
    static func versions(in header: String, weakMatches: Bool) -> (any: Bool, versions: Set<Int>) {
        var versions: Set<Int> = []
        for element in header.split(separator: ",") {
            var tag = element.trimmingCharacters(in: .whitespaces)[...]
            if tag == "*" { return (true, []) }
            if tag.hasPrefix("W/") {
                guard weakMatches else { continue }
                tag = tag.dropFirst(2)
            }
            guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { continue }
            var opaque = tag.dropFirst().dropLast()
            if opaque.hasSuffix(gzipSuffix) { opaque = opaque.dropLast(gzipSuffix.count) }
            // Only the canonical spelling of a version: "03" names none.
            if let version = Int(opaque), String(version) == opaque { versions.insert(version) }
        }
        return (false, versions)
    }

    /// The condition of a write's `If-Match` and `If-None-Match` headers (either may be
    /// absent): `If-Match` compares strongly, `If-None-Match` weakly (RFC 9110 §13.1).
    static func writeCondition(ifMatch: String?, ifNoneMatch: String?) -> WriteCondition {
        let matching = ifMatch.map { header -> WriteCondition in
            let named = versions(in: header, weakMatches: false)
            return named.any ? .exists : .latest(in: named.versions)
        }
        let notMatching = ifNoneMatch.map { header -> WriteCondition in
            let named = versions(in: header, weakMatches: true)
            return named.any ? .absent : .latestNot(in: named.versions)
        }
        switch (matching, notMatching) {
        case let (matching?, notMatching?): return .both(matching, notMatching)
        case let (matching, notMatching): return matching ?? notMatching ?? .none
        }
    }

    /// Whether an `If-None-Match` header names `version` (or any, `*`): the answer is a 304.
    static func ifNoneMatch(_ header: String, names version: Int) -> Bool {
        let named = versions(in: header, weakMatches: true)
        return named.any || named.versions.contains(version)
    }
}
