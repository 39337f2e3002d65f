// A fetched results controller made the way PredicateKit makes one: a request without sort descriptors, for one
// section. Apple's documentation asks for a sort descriptor, but the fetch works without one when there are no
// sections; with sections it fails when the objects do not come grouped by section.
import Foundation
import Testing

#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@Suite struct FetchedResultsControllerPortingTests {
    private func context(titles: [String]) throws -> NSManagedObjectContext {
        let container = try LibraryModel.container(url: URL(fileURLWithPath: "/dev/null"))
        let context = container.viewContext
        for title in titles { Book(context: context).title = title }
        try context.save()
        return context
    }

    @Test func aControllerWithoutSortDescriptorsFetchesOneSection() throws {
        let context = try context(titles: ["B", "A", "C"])
        let request = NSFetchRequest<Book>(entityName: "Book")
        request.predicate = NSPredicate(format: "title != %@", "C")
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        #expect(controller.sections?.count == 1)
        #expect(Set(controller.fetchedObjects?.compactMap(\.title) ?? []) == ["A", "B"])
    }
}
