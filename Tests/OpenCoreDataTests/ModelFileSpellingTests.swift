import Foundation
import OpenCoreDataShim
import Testing

/// Model files as Xcode and Apple's tools write them: the spellings of defaults and bounds Xcode uses for each
/// attribute type, and compiled models in either property list form.
@Suite struct ModelFileSpellingTests {
    #if !canImport(CoreData)
    // Apple's framework reads compiled models only; these read the Xcode source form.

    /// Attribute definitions with the text Xcode writes: Integer 16/32/64 values entered in the model editor's
    /// number fields are written `"0.0"`, Decimal defaults `"0"`, dates as seconds since 2001 beside a readable
    /// string, Booleans `YES`/`NO`.
    static let gauge = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="21754" \
        systemVersion="22E261" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Gauge" representedClassName="Gauge" syncable="YES" codeGenerationType="class">
                <attribute name="amount" optional="YES" attributeType="Decimal" defaultValueString="0"/>
                <attribute name="count16" optional="YES" attributeType="Integer 16" minValueString="0.0" \
        maxValueString="100.0" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="count32" optional="YES" attributeType="Integer 32" defaultValueString="7.0" \
        usesScalarValueType="YES"/>
                <attribute name="count64" optional="YES" attributeType="Integer 64" minValueString="-12" \
        maxValueString="12" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="flag" optional="YES" attributeType="Boolean" defaultValueString="YES" \
        usesScalarValueType="YES"/>
                <attribute name="link" optional="YES" attributeType="URI" defaultValueString="https://example.com/a"/>
                <attribute name="off" optional="YES" attributeType="Boolean" defaultValueString="NO" \
        usesScalarValueType="YES"/>
                <attribute name="ratio" optional="YES" attributeType="Double" minValueString="-3.5" \
        maxValueString="3.5" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="since" optional="YES" attributeType="Date" minDateTimeInterval="284000400" \
        minValueString="2010-01-01 01:00:00" defaultDateTimeInterval="388411200" \
        defaultValueString="2013-04-23 12:00:00 +0000" usesScalarValueType="NO"/>
                <attribute name="tag" optional="YES" attributeType="UUID" \
        defaultValueString="E621E1F8-C36C-495A-93FC-0C247A3E6E5F" usesScalarValueType="NO"/>
                <attribute name="until" optional="YES" attributeType="Date" \
        defaultValueString="2013-04-23 12:00:00 +0000" usesScalarValueType="NO"/>
            </entity>
        </model>
        """

    static func load(_ contents: String) throws -> NSManagedObjectModel {
        let directory = try ModelScratchDirectory()
        let url = try directory.write(contents, to: "Gauge.xcdatamodel/contents").deletingLastPathComponent()
        return try NSManagedObjectModel(validatingContentsOf: url)
    }

    @Test func xcodesSpellingsOfDefaultsAndBoundsLoadAsTheirTypes() throws {
        let attributes = try #require(try Self.load(Self.gauge).entitiesByName["Gauge"]?.attributesByName)
        func defaultValue(_ name: String) -> Any? { attributes[name]?.defaultValue }
        func rules(_ name: String) -> [String] { attributes[name]?.validationPredicates.map(\.predicateFormat) ?? [] }
        #expect(defaultValue("count16") as? NSNumber == 0)
        #expect(defaultValue("count32") as? NSNumber == 7)
        #expect(defaultValue("count64") as? NSNumber == 0)
        // The bounds are integers, as the model editor means them.
        #expect(rules("count16") == ["SELF >= 0", "SELF <= 100"])
        #expect(rules("count64") == ["SELF >= -12", "SELF <= 12"])
        #expect(rules("ratio") == ["SELF >= -3.5", "SELF <= 3.5"])
        #expect(defaultValue("amount") as? NSDecimalNumber == NSDecimalNumber(string: "0"))
        #expect(defaultValue("flag") as? NSNumber == true)
        #expect(defaultValue("off") as? NSNumber == false)
        #expect(defaultValue("since") as? Date == Date(timeIntervalSinceReferenceDate: 388_411_200))
        #expect(defaultValue("until") as? Date == Date(timeIntervalSinceReferenceDate: 388_411_200))
        #expect(rules("since") == ["timeIntervalSinceReferenceDate >= 284000400"])
        #expect(defaultValue("link") as? URL == URL(string: "https://example.com/a"))
        #expect(defaultValue("tag") as? UUID == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
    }

    @Test(arguments: [
        ("Integer 32", "defaultValueString", "1.5"), ("Integer 16", "maxValueString", "many"),
        ("Date", "defaultValueString", "soon"), ("Boolean", "defaultValueString", "maybe"),
    ])
    func aMalformedValueIsAnErrorNamingEntityAttributeAndValue(type: String, key: String, value: String) throws {
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
                <entity name="Gauge" representedClassName="Gauge">
                    <attribute name="reading" optional="YES" attributeType="\(type)" \(key)="\(value)"/>
                </entity>
            </model>
            """
        let error = try #require(throws: NSError.self) { try Self.load(contents) }
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.userInfo["entity"] as? String == "Gauge")
        #expect(error.userInfo["property"] as? String == "reading")
        #expect(error.localizedDescription.contains("'\(value)'"))
    }
    #endif

    /// A compiled model converted to an XML property list (`plutil -convert xml1`, or `NSKeyedArchiver` with XML
    /// output) is the same archive, and loads to the same model.
    @Test(.enabled(if: SQLiteCorpus.isAvailable)) func aCompiledModelInXMLFormLoadsAsItsBinaryForm() throws {
        let binary = SQLiteCorpus.root.appendingPathComponent(
            "momd/alemar11__CoreDataPlus/SampleModel/Fixtures/SampleModel.momd/SampleModel2.mom")
        let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: binary), format: nil)
        let xml = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        #expect(String(decoding: xml.prefix(5), as: UTF8.self) == "<?xml")
        let directory = try ModelScratchDirectory()
        let url = directory.url.appendingPathComponent("SampleModel2.mom")
        try xml.write(to: url)

        let fromBinary = try #require(NSManagedObjectModel(contentsOf: binary))
        let fromXML = try #require(NSManagedObjectModel(contentsOf: url))
        #expect(fromXML.entityVersionHashesByName == fromBinary.entityVersionHashesByName)
        #expect(Set(fromXML.entitiesByName.keys) == Set(fromBinary.entitiesByName.keys))
        #expect(fromXML.entityVersionHashesByName.count >= 3)
    }
}
