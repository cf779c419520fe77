/// Connection strings as logs and error messages may show them: without their password.
/// A `--store` value can reach a start-up error, a log line or a problem document; none of
/// them may carry the database's password.
package enum ConninfoRedaction {
    /// `text` with the password of every URI in it (`scheme://user:password@host`, whatever
    /// the scheme: a typo in it must not print the password either) and of every
    /// `password=` keyword replaced by `***`.
    package static func redacted(_ text: String) -> String {
        text.replacing(uriPassword) { match in "\(match.output.1):***@" }
            .replacing(keywordPassword) { _ in "password=***" }
    }

    /// `message`, an error about `conninfo`, with `conninfo`'s password replaced wherever it
    /// appears (libpq quotes a token it cannot read, the password included).
    package static func redacted(_ message: String, of conninfo: String) -> String {
        var message = redacted(message)
        for password in passwords(in: conninfo) where !password.isEmpty {
            message = message.replacing(password, with: "***")
        }
        return message
    }

    /// The passwords `conninfo` holds, as written.
    private static func passwords(in conninfo: String) -> [Substring] {
        conninfo.matches(of: uriPassword).map(\.output.2) + conninfo.matches(of: keywordPassword).map(\.output.1)
    }

    /// `scheme://user:password@`: the part before the password, and the password. (Made
    /// per use: a `Regex` is not `Sendable`, and redacting is rare.)
    private static var uriPassword: Regex<(Substring, Substring, Substring)> {
        try! Regex(#"([A-Za-z][A-Za-z0-9+.\-]*://[^:/@?#\s]*):([^@/?#\s]*)@"#)
    }
    /// `password=value` or `password = 'quoted value'`: the value.
    private static var keywordPassword: Regex<(Substring, Substring)> {
        try! Regex(#"password\s*=\s*('(?:[^'\\]|\\.)*'|\S*)"#)
    }
}
