import Foundation

/// The elements of a header that lists values with weights (`Accept`, `Accept-Encoding`,
/// RFC 9110 §12.4.2): each value lowercased, without its parameters, and its `q` (1 when
/// not given).
func qualityValues(_ header: String) -> [(value: String, quality: Double)] {
    header.split(separator: ",").map { element in
        let parts = element.split(separator: ";")
        let value = parts.first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        let quality = parts.dropFirst().compactMap { parameter -> Double? in
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return pair.count == 2 && pair[0].lowercased() == "q" ? Double(pair[1]) : nil
        }.first ?? 1
        return (value, quality)
    }
}
