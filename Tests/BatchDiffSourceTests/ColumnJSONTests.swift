import BatchDiffJSON
@testable import BatchDiffSource
import XCTest

/// How column values become JSON (docs/sources.md §3), from their text forms.
final class ColumnJSONTests: XCTestCase {
    private func json(_ text: String?, _ kind: ColumnKind) -> String {
        var output = JSONOutput()
        ColumnJSON.write(text.map { Array($0.utf8)[...] }, as: kind, to: &output)
        return String(decoding: output.bytes, as: UTF8.self)
    }

    func testScalars() {
        XCTAssertEqual(json("-42", .integer), "-42")
        XCTAssertEqual(json(nil, .integer), "null")
        XCTAssertEqual(json("1.5e+30", .float), "1.5e+30")
        XCTAssertEqual(json("NaN", .float), #""NaN""#)
        XCTAssertEqual(json("-Infinity", .float), #""-Infinity""#)
        XCTAssertEqual(json("t", .bool), "true")
        XCTAssertEqual(json("f", .bool), "false")
        XCTAssertEqual(json("say \"hi\"\n", .text), #""say \"hi\"\n""#)
        XCTAssertEqual(json("2024-05-01", .text), #""2024-05-01""#)
        XCTAssertEqual(json(#"{"a": [1, 2]}"#, .json), #"{"a": [1, 2]}"#)
    }

    func testNumericsPastFifteenDigitsAreStrings() {
        XCTAssertEqual(json("123456789012345", .numeric), "123456789012345")
        XCTAssertEqual(json("1234567890123456", .numeric), #""1234567890123456""#)
        XCTAssertEqual(json("0.000123456789012345", .numeric), "0.000123456789012345")
        XCTAssertEqual(json("12345678901234.50", .numeric), "12345678901234.50")
        XCTAssertEqual(json("12345678901234.56", .numeric), #""12345678901234.56""#)
        XCTAssertEqual(json("NaN", .numeric), #""NaN""#)
        XCTAssertEqual(json("1200", .numeric), "1200")
    }

    func testTimesHaveSixFractionalDigits() {
        XCTAssertEqual(json("2024-05-01 08:00:00+00", .timestampWithZone), #""2024-05-01T08:00:00.000000Z""#)
        XCTAssertEqual(json("2024-05-01 08:00:00.5+00", .timestampWithZone), #""2024-05-01T08:00:00.500000Z""#)
        XCTAssertEqual(json("2024-05-01 08:00:00.123456", .timestamp), #""2024-05-01T08:00:00.123456""#)
        XCTAssertEqual(json("infinity", .timestampWithZone), #""infinity""#)
        XCTAssertEqual(json("2024-05-01 08:00:00+02", .timestampWithZone), #""2024-05-01 08:00:00+02""#, "not UTC: kept as sent")
        // Written so, they sort as the times do.
        let times = ["2024-05-01 08:00:00+00", "2024-05-01 08:00:00.000001+00", "2024-05-01 08:00:00.1+00", "2024-05-01 08:00:01+00"]
        let written = times.map { json($0, .timestampWithZone) }
        XCTAssertEqual(written, written.sorted())
    }

    func testArrays() {
        XCTAssertEqual(json("{1,2,NULL}", .array(of: .integer)), "[1,2,null]")
        XCTAssertEqual(json(#"{"a b","say \"x\"",NULL,"NULL"}"#, .array(of: .text)), #"["a b","say \"x\"",null,"NULL"]"#)
        XCTAssertEqual(json("{{1,2},{3,4}}", .array(of: .integer)), "[[1,2],[3,4]]")
        XCTAssertEqual(json("[0:1]={t,f}", .array(of: .bool)), "[true,false]")
        XCTAssertEqual(json("{}", .array(of: .integer)), "[]")
        XCTAssertEqual(ColumnKind(typeOID: 1007), .array(of: .integer))
        XCTAssertEqual(ColumnKind(typeOID: 99999, element: 1184), .array(of: .timestampWithZone))
        XCTAssertEqual(ColumnKind(typeOID: 2950), .text)
    }
}
