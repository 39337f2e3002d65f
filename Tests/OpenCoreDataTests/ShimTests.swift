import OpenCoreDataShim
import Testing

@Suite struct ShimTests {
    @Test func shimReexportsFoundation() {
        // `import CoreData` brings Foundation with it on Apple platforms; the shim must do the same.
        let date = Date(timeIntervalSinceReferenceDate: 0)
        #expect(date.timeIntervalSince1970 == 978_307_200)
    }
}
