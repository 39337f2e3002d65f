import Foundation
import OpenCoreData
import Testing

@testable import OpenCoreDataCore

/// Case- and diacritic-insensitive matching folds Latin text scalar by scalar through a table; it must give exactly
/// what folding the whole string through Foundation gives, and so the same matches.
@Suite struct PredicateStringFoldingTests {
    static let optionSets: [NSComparisonPredicate.Options] = [
        .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive],
    ]

    @Test(arguments: optionSets)
    func everyLatinScalarFoldsAsFoundationFoldsIt(options: NSComparisonPredicate.Options) {
        for value in UInt32(0x80)..<0x250 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a" + String(Character(scalar)) + "Z"
            let foundation = PredicateStringFolding.foundationFold(text, options: options)
            if let bytes = PredicateStringFolding.latinFold(text, options: options) {
                #expect(String(decoding: bytes, as: UTF8.self) == foundation, "U+\(String(value, radix: 16))")
            }
            #expect(PredicateStringFolding.fold(text, options: options) == foundation)
        }
    }

    @Test(arguments: optionSets)
    func mixedLatinStringsFoldAsFoundationFoldsThem(options: NSComparisonPredicate.Options) {
        var state: UInt64 = 0x1234_5678
        let alphabet = Array("aAeEzZ 09-_ÀÉéèÊëÏîÔöÙûÇçÑñßÆæØøŒœŁłĐđİıǅǈǲ".unicodeScalars)
        for _ in 0..<2_000 {
            var text = String.UnicodeScalarView()
            for _ in 0..<12 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text.append(alphabet[Int((state >> 33) % UInt64(alphabet.count))])
            }
            let string = String(text)
            #expect(
                PredicateStringFolding.fold(string, options: options)
                    == PredicateStringFolding.foundationFold(string, options: options), "\(string)")
        }
    }

    @Test func containsIgnoringCaseAndDiacriticsFindsAccentedText() {
        let predicate = NSPredicate(format: "SELF CONTAINS[cd] %@", "cafe")
        #expect(predicate.evaluate(with: "CAFÉ Olé noir"))
        #expect(predicate.evaluate(with: "un café au lait"))
        #expect(!predicate.evaluate(with: "Hôtel Central"))
        #expect(NSPredicate(format: "SELF CONTAINS[cd] %@", "HOTEL").evaluate(with: "Hôtel Central"))
        #expect(
            NSPredicate(format: "SELF CONTAINS[c] %@", "hotel").evaluate(with: "Hôtel Central") == false)
        #expect(NSPredicate(format: "SELF CONTAINS[d] %@", "Hotel").evaluate(with: "Hôtel Central"))
        #expect(NSPredicate(format: "SELF CONTAINS[c] %@", "STRASSE").evaluate(with: "Große Straße"))
        // Text beyond the table (Greek) still matches, through Foundation's folding.
        #expect(NSPredicate(format: "SELF CONTAINS[cd] %@", "αθηνα").evaluate(with: "ΑΘΗΝΑ, Ελλάδα"))
    }
}
