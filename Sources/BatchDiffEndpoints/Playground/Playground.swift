import HTTPServer

/// `GET /`: the playground, one HTML page with its CSS and JavaScript inline
/// (`playground.html`, compiled into the binary): two collections diffed into the batch,
/// the steps and the JSON Patch, a list animated as a table view applies the batch, and a
/// feed followed by the JavaScript client, `GET /batchdiff.js` (`clients/js/batchdiff.js`).
/// It asks nothing of any host but this server.
enum Playground {
    static let page = HTTPResponse(status: 200, headers: [
        ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache"),
        // The page runs its own inline script and this server's client module, and talks to this server only.
        ("Content-Security-Policy", "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"),
        ("X-Content-Type-Options", "nosniff"),
    ], body: PackageResources.playground_html)

    /// The JavaScript client as an ES module, for the playground and any page of this origin.
    static let clientModule = HTTPResponse(status: 200, headers: [
        ("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "no-cache"),
        ("X-Content-Type-Options", "nosniff"),
    ], body: PackageResources.batchdiff_js)
}
