import ArgumentParser
import OpenCoreData
import XCDataModelFormat

/// `coredata diagram <bundle> -o model.svg`: the picture Xcode's graph view gives — a box per entity with its
/// attributes and relationships, an arrow per relationship (two heads for to-many), a hollow triangle from each
/// entity to its parent.
struct DiagramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagram",
        abstract: "Draw a model's entities and relationships as an SVG picture.",
        discussion: """
            Boxes are placed where Xcode's graph view placed them when the model file records it, and in a grid \
            otherwise.
            """
    )

    @Argument(help: "The model: an .xcdatamodeld, .xcdatamodel, .momd or .mom.")
    var path: String

    @Option(name: .shortAndLong, help: "The SVG file to write (standard output if not given).")
    var output: String?

    @Option(name: .customLong("version"), help: "Draw this version instead of the current one.")
    var versionName: String?

    func run() throws {
        do {
            try render()
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw ModelToolError(message: error.localizedDescription)
        }
    }

    private func render() throws {
        let url = URL(fileURLWithPath: path)
        let versions = try NSManagedObjectModel.versionsOfModel(at: url)
        let name = try versionName ?? NSManagedObjectModel.currentVersionNameOfModel(at: url) ?? versions.last?.name
        guard let version = versions.first(where: { $0.name == name }) else {
            throw ValidationError(
                "No version named '\(name ?? "")'; the versions are \(versions.map(\.name).joined(separator: ", "))")
        }
        let layout = Self.xcodeLayout(of: url, version: version.name)
        let svg = ModelDiagram(model: version.model, layout: layout).svg()
        if let output {
            try Data(svg.utf8).write(to: URL(fileURLWithPath: output))
        } else {
            print(svg, terminator: "")
        }
    }

    /// Where Xcode placed the entities of `version`, when the model is an Xcode file.
    static func xcodeLayout(of url: URL, version: String) -> [String: XCDataModel.Layout] {
        switch url.pathExtension {
        case "xcdatamodeld": return (try? XCDataModelBundle(contentsOf: url))?.version(named: version)?.layout ?? [:]
        case "xcdatamodel": return (try? XCDataModel(contentsOf: url))?.layout ?? [:]
        default: return [:]
        }
    }
}

/// Lays out and draws a model as SVG.
struct ModelDiagram {
    let model: NSManagedObjectModel
    let layout: [String: XCDataModel.Layout]

    static let characterWidth = 7.4
    static let rowHeight = 17.0
    static let headerHeight = 26.0
    static let margin = 40.0

    struct Box {
        var entity: NSEntityDescription
        var rows: [Row]
        var x = 0.0
        var y = 0.0
        var width: Double
        var height: Double

        var centerX: Double { x + width / 2 }
        var centerY: Double { y + height / 2 }
    }

    struct Row {
        var text: String
        var isSectionTitle = false
    }

    func svg() -> String {
        var boxes = model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }.map(Self.box)
        place(&boxes)
        let index = Dictionary(uniqueKeysWithValues: boxes.enumerated().map { ($1.entity.name ?? "", $0) })
        let width = (boxes.map { $0.x + $0.width }.max() ?? 0) + Self.margin
        let height = (boxes.map { $0.y + $0.height }.max() ?? 0) + Self.margin
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.number(width))" height="\(Self.number(height))" \
            viewBox="0 0 \(Self.number(width)) \(Self.number(height))" font-family="DejaVu Sans Mono, Menlo, monospace" \
            font-size="12">
            <defs>
              <marker id="one" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" orient="auto-start-reverse">
                <path d="M0,0 L10,5 L0,10" fill="none" stroke="#44546a" stroke-width="1.5"/>
              </marker>
              <marker id="many" viewBox="0 0 18 10" refX="18" refY="5" markerWidth="15" markerHeight="9" orient="auto-start-reverse">
                <path d="M0,0 L10,5 L0,10 M8,0 L18,5 L8,10" fill="none" stroke="#44546a" stroke-width="1.5"/>
              </marker>
              <marker id="parent" viewBox="0 0 12 12" refX="12" refY="6" markerWidth="12" markerHeight="12" orient="auto">
                <path d="M0,0 L12,6 L0,12 Z" fill="#ffffff" stroke="#44546a" stroke-width="1.2"/>
              </marker>
            </defs>
            <rect width="100%" height="100%" fill="#ffffff"/>

            """
        out += edges(boxes: boxes, index: index)
        for box in boxes {
            out += draw(box)
        }
        out += "</svg>\n"
        return out
    }

    static func box(_ entity: NSEntityDescription) -> Box {
        var rows: [Row] = []
        let own = entity.properties.filter { $0.entity === entity }.sorted { $0.name < $1.name }
        let attributes = own.compactMap { $0 as? NSAttributeDescription }
        let relationships = own.compactMap { $0 as? NSRelationshipDescription }
        let fetched = own.compactMap { $0 as? NSFetchedPropertyDescription }
        if !attributes.isEmpty {
            rows.append(Row(text: "Attributes", isSectionTitle: true))
            for attribute in attributes {
                let optional = attribute.isOptional ? "?" : ""
                rows.append(
                    Row(text: "\(attribute.name): \(ModelCommand.typeName(attribute.attributeType))\(optional)"))
            }
        }
        if !relationships.isEmpty {
            rows.append(Row(text: "Relationships", isSectionTitle: true))
            for relationship in relationships {
                let arrow = relationship.isToMany ? "→→" : "→"
                rows.append(Row(text: "\(relationship.name) \(arrow) \(relationship.destinationEntity?.name ?? "?")"))
            }
        }
        if !fetched.isEmpty {
            rows.append(Row(text: "Fetched Properties", isSectionTitle: true))
            for property in fetched {
                rows.append(Row(text: "\(property.name) ⇢ \(property.fetchRequest?.entityName ?? "?")"))
            }
        }
        var title = entity.name ?? ""
        if entity.isAbstract { title += " (abstract)" }
        let longest = max(title.count + 2, rows.map(\.text.count).max() ?? 0)
        let width = max(140, Double(longest) * characterWidth + 24)
        let height = headerHeight + Double(rows.count) * rowHeight + (rows.isEmpty ? 4 : 10)
        return Box(entity: entity, rows: rows, width: width, height: height)
    }

    /// Xcode's positions, spread just enough that the (larger) boxes do not overlap; a grid when the file records
    /// no positions or they cannot be spread.
    func place(_ boxes: inout [Box]) {
        let positions = boxes.map { layout[$0.entity.name ?? ""] }
        if !boxes.isEmpty, positions.allSatisfy({ $0 != nil }) {
            let minX = positions.map { $0!.x }.min() ?? 0
            let minY = positions.map { $0!.y }.min() ?? 0
            for scale in stride(from: 1.0, through: 6.0, by: 0.1) {
                var candidate = boxes
                for index in candidate.indices {
                    candidate[index].x = Self.margin + (positions[index]!.x - minX) * scale
                    candidate[index].y = Self.margin + (positions[index]!.y - minY) * scale
                }
                if !Self.overlaps(candidate) {
                    boxes = candidate
                    return
                }
            }
        }
        let columns = max(1, Int(Double(boxes.count).squareRoot().rounded(.up)))
        let columnWidth = (boxes.map(\.width).max() ?? 0) + 80
        var rowTop = Self.margin
        for start in stride(from: 0, to: boxes.count, by: columns) {
            let row = start..<min(start + columns, boxes.count)
            for index in row {
                boxes[index].x = Self.margin + Double(index - start) * columnWidth
                boxes[index].y = rowTop
            }
            rowTop += (row.map { boxes[$0].height }.max() ?? 0) + 70
        }
    }

    static func overlaps(_ boxes: [Box]) -> Bool {
        let gap = 30.0
        for first in boxes.indices {
            for second in boxes.indices where second > first {
                let a = boxes[first]
                let b = boxes[second]
                if a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap
                    && b.y < a.y + a.height + gap
                {
                    return true
                }
            }
        }
        return false
    }

    func draw(_ box: Box) -> String {
        let name = box.entity.name ?? ""
        var out = "<g id=\"\(Self.escape(name))\">\n"
        out += "  <rect x=\"\(Self.number(box.x))\" y=\"\(Self.number(box.y))\" width=\"\(Self.number(box.width))\" "
        out +=
            "height=\"\(Self.number(box.height))\" rx=\"6\" fill=\"#fbfcfe\" stroke=\"#6b7c93\" stroke-width=\"1.2\"/>\n"
        out += "  <path d=\"M\(Self.number(box.x)),\(Self.number(box.y + Self.headerHeight)) "
        out += "h\(Self.number(box.width))\" stroke=\"#6b7c93\" stroke-width=\"1\"/>\n"
        out += "  <path d=\"M\(Self.number(box.x + 1)),\(Self.number(box.y + Self.headerHeight - 0.5)) "
        out += "v-\(Self.number(Self.headerHeight - 7)) a5,5 0 0 1 5,-5 h\(Self.number(box.width - 12)) "
        out += "a5,5 0 0 1 5,5 v\(Self.number(Self.headerHeight - 7)) z\" fill=\"#dce6f4\"/>\n"
        let style = box.entity.isAbstract ? " font-style=\"italic\"" : ""
        var title = name
        if box.entity.isAbstract { title += " (abstract)" }
        out += "  <text x=\"\(Self.number(box.centerX))\" y=\"\(Self.number(box.y + 17))\" text-anchor=\"middle\" "
        out += "font-weight=\"bold\"\(style)>\(Self.escape(title))</text>\n"
        var y = box.y + Self.headerHeight + 14
        for row in box.rows {
            if row.isSectionTitle {
                out += "  <text x=\"\(Self.number(box.x + 8))\" y=\"\(Self.number(y))\" fill=\"#7a8699\" "
                out += "font-size=\"10\">\(Self.escape(row.text))</text>\n"
            } else {
                out += "  <text x=\"\(Self.number(box.x + 14))\" y=\"\(Self.number(y))\" fill=\"#1f2933\">"
                out += "\(Self.escape(row.text))</text>\n"
            }
            y += Self.rowHeight
        }
        out += "</g>\n"
        return out
    }

    /// One line per relationship and its inverse (heads at the ends the relationships point to), one per
    /// relationship without an inverse, and an inheritance arrow from each entity to its parent.
    func edges(boxes: [Box], index: [String: Int]) -> String {
        var out = ""
        var drawn = Set<ObjectIdentifier>()
        var pairCounts: [String: Int] = [:]
        for box in boxes {
            for case let relationship as NSRelationshipDescription in box.entity.properties
            where relationship.entity === box.entity && !drawn.contains(ObjectIdentifier(relationship)) {
                drawn.insert(ObjectIdentifier(relationship))
                let inverse = relationship.inverseRelationship
                if let inverse { drawn.insert(ObjectIdentifier(inverse)) }
                guard let destinationName = relationship.destinationEntity?.name, let target = index[destinationName]
                else { continue }
                let source = boxes[index[box.entity.name ?? ""] ?? 0]
                let destination = boxes[target]
                let headAtDestination = relationship.isToMany ? "many" : "one"
                let headAtSource = inverse.map { $0.isToMany ? "many" : "one" }
                let title = [relationship.name, inverse?.name].compactMap { $0 }.joined(separator: " ⇄ ")
                if source.entity === destination.entity {
                    out += loop(around: source, start: headAtSource, end: headAtDestination, title: title)
                    continue
                }
                let key = [source.entity.name ?? "", destination.entity.name ?? ""].sorted().joined(separator: "|")
                let lane = pairCounts[key, default: 0]
                pairCounts[key] = lane + 1
                let offset = Double(lane) * 10 - Double(lane % 2) * 20 * Double(lane)
                out += line(
                    from: source, to: destination, offset: offset, start: headAtSource, end: headAtDestination,
                    dashed: false, title: title, obstacles: boxes)
            }
        }
        for box in boxes {
            guard let parent = box.entity.superentity?.name, let target = index[parent] else { continue }
            out += line(
                from: box, to: boxes[target], offset: 0, start: nil, end: "parent", dashed: true,
                title: "\(box.entity.name ?? "") inherits from \(parent)", obstacles: boxes)
        }
        return out
    }

    func line(
        from source: Box, to destination: Box, offset: Double, start: String?, end: String?, dashed: Bool,
        title: String, obstacles: [Box]
    ) -> String {
        var (x1, y1, x2, y2) = (source.centerX, source.centerY, destination.centerX, destination.centerY)
        let length = max(((x2 - x1) * (x2 - x1) + (y2 - y1) * (y2 - y1)).squareRoot(), 1)
        let (nx, ny) = (-(y2 - y1) / length * offset, (x2 - x1) / length * offset)
        x1 += nx
        y1 += ny
        x2 += nx
        y2 += ny
        var points = [
            Self.clip(from: (x2, y2), toward: (x1, y1), box: source),
            Self.clip(from: (x1, y1), toward: (x2, y2), box: destination),
        ]
        let others = obstacles.filter { $0.entity !== source.entity && $0.entity !== destination.entity }
        if others.contains(where: { Self.crosses(points[0], points[1], $0) }),
            let route = Self.elbow(from: source, to: destination, shift: offset, avoiding: others)
        {
            points = route
        }
        var out = "<path d=\"M" + points.map { "\(Self.number($0.0)),\(Self.number($0.1))" }.joined(separator: " L")
        out += "\" fill=\"none\" stroke=\"#44546a\" stroke-width=\"1.3\""
        if dashed { out += " stroke-dasharray=\"6 4\"" }
        if let start { out += " marker-start=\"url(#\(start))\"" }
        if let end { out += " marker-end=\"url(#\(end))\"" }
        out += "><title>\(Self.escape(title))</title></path>\n"
        return out
    }

    enum Side: CaseIterable {
        case top, bottom, left, right

        var isVertical: Bool { self == .top || self == .bottom }
    }

    /// The middle of a box's side, moved along it by `shift`.
    static func anchor(_ box: Box, _ side: Side, shift: Double) -> (Double, Double) {
        switch side {
        case .top: return (box.centerX + shift, box.y)
        case .bottom: return (box.centerX + shift, box.y + box.height)
        case .left: return (box.x, box.centerY + shift)
        case .right: return (box.x + box.width, box.centerY + shift)
        }
    }

    /// The shortest path with one right-angle bend that leaves `source` and enters `destination` through their
    /// sides and crosses none of `others`; `nil` when there is none.
    static func elbow(from source: Box, to destination: Box, shift: Double, avoiding others: [Box])
        -> [(Double, Double)]?
    {
        var best: [(Double, Double)]?
        var bestLength = Double.infinity
        for exitSide in Side.allCases {
            for entrySide in Side.allCases where exitSide.isVertical != entrySide.isVertical {
                let exit = anchor(source, exitSide, shift: shift)
                let entry = anchor(destination, entrySide, shift: shift)
                let bend = exitSide.isVertical ? (exit.0, entry.1) : (entry.0, exit.1)
                let gap = 12.0
                let leaves: Bool
                switch exitSide {
                case .top: leaves = bend.1 < exit.1 - gap
                case .bottom: leaves = bend.1 > exit.1 + gap
                case .left: leaves = bend.0 < exit.0 - gap
                case .right: leaves = bend.0 > exit.0 + gap
                }
                let arrives: Bool
                switch entrySide {
                case .top: arrives = bend.1 < entry.1 - gap
                case .bottom: arrives = bend.1 > entry.1 + gap
                case .left: arrives = bend.0 < entry.0 - gap
                case .right: arrives = bend.0 > entry.0 + gap
                }
                guard leaves, arrives,
                    !others.contains(where: { crosses(exit, bend, $0) || crosses(bend, entry, $0) })
                else { continue }
                let length = abs(bend.0 - exit.0) + abs(bend.1 - exit.1) + abs(entry.0 - bend.0) + abs(entry.1 - bend.1)
                if length < bestLength {
                    bestLength = length
                    best = [exit, bend, entry]
                }
            }
        }
        // Over the top or under the bottom of both boxes, when they stand side by side.
        let channels: [(Side, Double)] = [
            (.top, min(source.y, destination.y) - 18 - abs(shift)),
            (.bottom, max(source.y + source.height, destination.y + destination.height) + 18 + abs(shift)),
        ]
        for (side, level) in channels {
            let exit = anchor(source, side, shift: shift)
            let entry = anchor(destination, side, shift: shift)
            let route = [exit, (exit.0, level), (entry.0, level), entry]
            guard
                !zip(route, route.dropFirst()).contains(where: { segment in
                    others.contains { crosses(segment.0, segment.1, $0) }
                })
            else { continue }
            let length = abs(level - exit.1) + abs(entry.0 - exit.0) + abs(level - entry.1)
            if length < bestLength {
                bestLength = length
                best = route
            }
        }
        return best
    }

    /// Whether the segment from `a` to `b` passes through `box` (with a little room).
    static func crosses(_ a: (Double, Double), _ b: (Double, Double), _ box: Box) -> Bool {
        let room = 4.0
        let (left, right) = (box.x - room, box.x + box.width + room)
        let (top, bottom) = (box.y - room, box.y + box.height + room)
        var (t0, t1) = (0.0, 1.0)
        let (dx, dy) = (b.0 - a.0, b.1 - a.1)
        for (p, q) in [(-dx, a.0 - left), (dx, right - a.0), (-dy, a.1 - top), (dy, bottom - a.1)] {
            if p == 0 {
                if q < 0 { return false }
            } else {
                let r = q / p
                if p < 0 { t0 = max(t0, r) } else { t1 = min(t1, r) }
                if t0 > t1 { return false }
            }
        }
        return true
    }

    func loop(around box: Box, start: String?, end: String, title: String) -> String {
        let x = box.x + box.width
        let top = box.y + 8
        let bottom = box.y + min(box.height - 8, 40)
        var out = "<path d=\"M\(Self.number(x)),\(Self.number(top)) C\(Self.number(x + 45)),\(Self.number(top - 10)) "
        out += "\(Self.number(x + 45)),\(Self.number(bottom + 10)) \(Self.number(x)),\(Self.number(bottom))\" "
        out += "fill=\"none\" stroke=\"#44546a\" stroke-width=\"1.3\""
        if let start { out += " marker-start=\"url(#\(start))\"" }
        out += " marker-end=\"url(#\(end))\"><title>\(Self.escape(title))</title></path>\n"
        return out
    }

    /// Where the segment from `outside` to the centre of `box` crosses the box's border.
    static func clip(from outside: (Double, Double), toward inside: (Double, Double), box: Box) -> (Double, Double) {
        let (dx, dy) = (outside.0 - inside.0, outside.1 - inside.1)
        var t = 1.0
        if dx != 0 { t = min(t, (dx > 0 ? box.x + box.width - inside.0 : box.x - inside.0) / dx) }
        if dy != 0 { t = min(t, (dy > 0 ? box.y + box.height - inside.1 : box.y - inside.1) / dy) }
        t = max(0, t)
        return (inside.0 + dx * t, inside.1 + dy * t)
    }

    static func number(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
