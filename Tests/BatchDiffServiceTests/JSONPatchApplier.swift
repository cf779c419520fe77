import Foundation
import XCTest

extension ServerTestCase {
    /// Applies each `(document, patch)` with `jsonpatch` and returns the results, parsed
    /// (an error's text when a patch does not apply).
    func applyWithJSONPatch(_ cases: [(document: Any, patch: Any)]) throws -> [Any] {
        let python = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/venv/bin/python").standardized
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            XCTFail("no \(python.path): run scripts/test-venv.sh (make test does)")
            return []
        }
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", """
            import json, sys, jsonpatch
            for document, patch in json.load(sys.stdin):
                try:
                    print(json.dumps(jsonpatch.apply_patch(document, patch), sort_keys=True, separators=(",", ":"), ensure_ascii=False))
                except Exception as error:
                    print("error: " + repr(error))
            """]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let data = try JSONSerialization.data(withJSONObject: cases.map { [$0.document, $0.patch] })
        let writer = Thread {
            input.fileHandleForWriting.write(data)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        process.waitUntilExit()
        return lines.map { line in (try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed])) ?? line }
    }
}
